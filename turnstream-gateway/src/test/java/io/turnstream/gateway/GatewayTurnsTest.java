package io.turnstream.gateway;

import static io.turnstream.gateway.ItemInvariants.assertEveryStartedItemIsClosedOnceAndNothingFollows;
import static io.turnstream.gateway.ItemInvariants.assertFinalContentIsTheStreamedText;
import static io.turnstream.gateway.ItemInvariants.shape;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.turnstream.gateway.loop.GatewayMetrics;
import io.turnstream.gateway.loop.MaxTokensContinuation;
import io.turnstream.gateway.loop.TurnTracing;
import io.turnstream.gateway.provider.ErrorCodes;
import io.turnstream.gateway.provider.FinishReasons;
import io.turnstream.gateway.sim.SimulatedAnthropicServer;
import io.turnstream.gateway.sim.SimulatedReply;
import io.turnstream.gateway.sim.SimulatedText;
import io.turnstream.gateway.sim.SimulationScript;
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.model.ControlMessage;
import io.turnstream.model.ItemType;
import io.turnstream.model.Json;
import io.turnstream.model.Origins;
import io.turnstream.model.OutputItem;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.ToolResult;
import io.turnstream.model.Topics;
import io.turnstream.model.TurnActivity;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.testsupport.UsesBroker;
import io.turnstream.tools.PublishedTools;
import io.turnstream.tools.ToolRegistry;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The gateway end to end: real HTTP API, the simulated provider over loopback HTTP, a real
 * embedded Kafka broker, and a stub tool executor answering tool calls on {@code llm.tool-results}.
 */
@UsesBroker
class GatewayTurnsTest {

    private static final Duration TURN_TIMEOUT = Duration.ofSeconds(60);
    private static final String FALLBACK_MODEL = "sim-fallback";

    @RegisterExtension
    static final BrokerStack stack = new BrokerStack();
    private static Gateway gateway;
    private static RawEventsTap raw;
    private static final HttpClient http = HttpClient.newHttpClient();
    /** Requests the provider received per prompt, for scripts that answer differently the second time. */
    private static final Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();
    /** The last request body the provider received per prompt. */
    private static final Map<String, JsonNode> lastRequest = new ConcurrentHashMap<>();

    @BeforeAll
    static void startEverything() throws Exception {
        stack.broker(3);
        // the stub executor below runs the installed tools: publish them as a real executor does
        PublishedTools.publish(stack.bootstrapServers(), Topics.DEFAULTS, ToolRegistry.installed());
        SimulatedAnthropicServer provider = stack.closing(
                SimulatedAnthropicServer.start(0, GatewayTurnsTest::script, 0));
        Properties settings = stack.gatewaySettings();
        settings.put("turnstream.gateway.stall-timeout-ms", "1000");
        settings.put("turnstream.gateway.retry.base-delay-ms", "50");
        settings.put("turnstream.gateway.price.turnstream-simulated", "3,15,0.3,3.75");
        gateway = stack.gateway(settings, provider);
        raw = stack.closing(new RawEventsTap(stack.bootstrapServers(), Topics.DEFAULTS, GatewayTurnsTest::runTool));
    }

    /**
     * The provider's behaviour, chosen by the prompt's first word; anything else is the demo's
     * workspace tour (list the workspace, read its README, answer from it).
     */
    private static SimulatedReply script(io.turnstream.gateway.sim.SimulatedRequest request) {
        String prompt = request.firstUserText();
        int attempt = attempts.computeIfAbsent(prompt, p -> new AtomicInteger()).incrementAndGet();
        lastRequest.put(prompt, request.body());
        if (prompt.startsWith("cached:")) {
            return request.lastToolResults().isEmpty()
                    ? SimulatedReply.answer().toolUse("list_files", Json.MAPPER.createObjectNode().put("path", "."))
                            .usage(1000, null, 900L)
                    : SimulatedReply.answer().text("Two entries.").usage(1100, 900L, 150L);
        }
        if (prompt.startsWith("slow:")) {
            return SimulatedReply.answer().text(SimulatedText.words(5_000)).tokensPerSecond(100);
        }
        if (prompt.startsWith("rate-limited:")) {
            return attempt == 1
                    ? SimulatedReply.httpError(429, 1, "rate_limit_error", "Number of requests has exceeded your rate limit")
                    : SimulatedReply.answer().text("Recovered after a rate limit.");
        }
        if (prompt.startsWith("stall:")) {
            return SimulatedReply.answer().text(SimulatedText.words(50)).stallAfterTokens(5);
        }
        if (prompt.startsWith("flaky:")) {
            return attempt == 1
                    ? SimulatedReply.answer().text(SimulatedText.words(20)).failAfterTokens(3, "overloaded_error")
                    : SimulatedReply.answer().text("Recovered after a broken stream.");
        }
        if (prompt.startsWith("stall-fallback:")) {
            return FALLBACK_MODEL.equals(request.model())
                    ? SimulatedReply.answer().text("Answered by " + request.model() + ".")
                    : SimulatedReply.answer().text(SimulatedText.words(50)).stallAfterTokens(5);
        }
        if (prompt.startsWith("rate-limited-long:")) {
            return SimulatedReply.httpError(429, 20, "rate_limit_error", "Number of requests has exceeded your rate limit");
        }
        if (prompt.startsWith("truncated:")) {
            return attempt < 3
                    ? SimulatedReply.answer().text("Part " + attempt + ".").stopReason("max_tokens")
                    : SimulatedReply.answer().text("The end.");
        }
        if (prompt.startsWith("endless:")) {
            return SimulatedReply.answer().text("More " + attempt + ".").stopReason("max_tokens");
        }
        if (prompt.startsWith("quick:")) {
            return SimulatedReply.answer().text("Hello.");
        }
        if (prompt.startsWith("overloaded:")) {
            return FALLBACK_MODEL.equals(request.model())
                    ? SimulatedReply.answer().text("Answered by " + request.model() + ".")
                    : SimulatedReply.httpError(529, null, "overloaded_error", "Overloaded");
        }
        return SimulationScript.workspaceTour(100).reply(request);
    }

    /** The stub tool executor: a two-file workspace. */
    private static ToolResult runTool(RawEventsTap.Call call) {
        JsonNode output = switch (call.toolName()) {
            case "list_files" -> TextNode.valueOf("README.md\nsrc/\n");
            case "read_file" -> TextNode.valueOf("# Demo workspace\nIt holds one README.\n");
            default -> TextNode.valueOf("unknown tool");
        };
        long now = System.currentTimeMillis();
        return new ToolResult(call.callId(), call.turnId(), call.toolName(), true, output, null, now, now);
    }

    @Test
    void aTurnIsTracedUnderItsRequestsTraceAsTurnStepsModelCallsAndToolCalls() throws Exception {
        InMemorySpanExporter exported = InMemorySpanExporter.create();
        gateway.metrics().traceWith(TurnTracing.of(OpenTelemetrySdk.builder().setTracerProvider(SdkTracerProvider.builder()
                .addSpanProcessor(SimpleSpanProcessor.create(exported)).build()).build()));
        try {
            String traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(gateway.baseUrl() + "/v1/turns"))
                    .header("content-type", "application/json")
                    .header("traceparent", "00-" + traceId + "-00f067aa0ba902b7-01")
                    .POST(HttpRequest.BodyPublishers.ofString(
                            "{\"provider\": \"simulated\", \"prompt\": \"Trace this tour of the workspace\"}"))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).isEqualTo(202);
            JsonNode started = Json.fromString(response.body(), JsonNode.class);
            awaitDone(started.get("runId").asText());

            SpanData turn = await().atMost(TURN_TIMEOUT).until(() -> exported.getFinishedSpanItems().stream()
                    .filter(span -> span.getTraceId().equals(traceId) && span.getName().equals("invoke_agent turnstream"))
                    .findFirst().orElse(null), span -> span != null);
            List<SpanData> spans = exported.getFinishedSpanItems().stream()
                    .filter(span -> span.getTraceId().equals(traceId)).toList();
            assertThat(turn.getParentSpanId()).as("under the request's span").isEqualTo("00f067aa0ba902b7");
            Attributes turnAttributes = turn.getAttributes();
            assertThat(turnAttributes.get(AttributeKey.stringKey("gen_ai.operation.name"))).isEqualTo("invoke_agent");
            assertThat(turnAttributes.get(AttributeKey.stringKey("gen_ai.provider.name"))).isEqualTo("simulated");
            assertThat(turnAttributes.get(AttributeKey.stringKey("gen_ai.request.model"))).isEqualTo("turnstream-simulated");
            assertThat(turnAttributes.get(AttributeKey.stringKey("gen_ai.conversation.id")))
                    .isEqualTo(started.get("threadId").asText());
            assertThat(turnAttributes.get(AttributeKey.longKey("gen_ai.usage.input_tokens"))).isPositive();
            assertThat(turnAttributes.get(AttributeKey.stringArrayKey("gen_ai.response.finish_reasons")))
                    .containsExactly("stop");

            List<SpanData> steps = spans.stream().filter(span -> span.getName().startsWith("step ")).toList();
            assertThat(steps).extracting(SpanData::getName).containsExactlyInAnyOrder("step 1", "step 2", "step 3");
            assertThat(steps).allSatisfy(step -> assertThat(step.getParentSpanId()).isEqualTo(turn.getSpanId()));
            List<SpanData> calls = spans.stream().filter(span -> span.getName().startsWith("chat ")).toList();
            assertThat(calls).hasSize(3).allSatisfy(call -> {
                assertThat(call.getKind()).isEqualTo(SpanKind.CLIENT);
                assertThat(call.getAttributes().get(AttributeKey.stringKey("gen_ai.operation.name"))).isEqualTo("chat");
                assertThat(call.getAttributes().get(AttributeKey.longKey("gen_ai.usage.output_tokens"))).isPositive();
            });
            assertThat(calls).extracting(SpanData::getParentSpanId)
                    .containsExactlyInAnyOrderElementsOf(steps.stream().map(SpanData::getSpanId).toList());
            List<SpanData> tools = spans.stream().filter(span -> span.getName().startsWith("execute_tool ")).toList();
            assertThat(tools).extracting(SpanData::getName)
                    .containsExactlyInAnyOrder("execute_tool list_files", "execute_tool read_file");
            assertThat(tools).allSatisfy(tool -> {
                assertThat(tool.getAttributes().get(AttributeKey.stringKey("gen_ai.tool.call.id"))).isNotBlank();
                assertThat(steps).extracting(SpanData::getSpanId).contains(tool.getParentSpanId());
            });
        } finally {
            gateway.metrics().traceWith(TurnTracing.off());
        }
    }

    // ---- the agent loop ----

    /** list_files is read-only (concurrency-safe): its call is released as its block completes, before the step ends. */
    @Test
    void twoToolStepsThenAFinalAnswer() throws Exception {
        JsonNode started = startTurn("{\"provider\": \"simulated\", \"prompt\": \"What is in this workspace?\"}");
        String runId = started.get("runId").asText();

        StreamPayload.ResponseDone done = awaitDone(runId);

        String r = runId;
        assertThat(shape(raw.payloads(runId))).containsExactly(
                "response_start",
                "item_start " + r + "-user-prompt message", "item_done " + r + "-user-prompt message",
                "item_start " + r + "-s1-0 reasoning", "item_delta " + r + "-s1-0 x13", "item_done " + r + "-s1-0 reasoning",
                "item_start " + r + "-s1-1 message", "item_delta " + r + "-s1-1 x6", "item_done " + r + "-s1-1 message",
                "item_start " + r + "-s1-2 function_call", "tool_status pending", "item_delta " + r + "-s1-2 x1",
                "item_done " + r + "-s1-2 function_call", "turn_status step_completed", "tool_status running",
                "item_start " + r + "-s1-out0 function_call_output", "item_done " + r + "-s1-out0 function_call_output",
                "tool_status completed",
                "item_start " + r + "-s2-0 reasoning", "item_delta " + r + "-s2-0 x14", "item_done " + r + "-s2-0 reasoning",
                "item_start " + r + "-s2-1 message", "item_delta " + r + "-s2-1 x4", "item_done " + r + "-s2-1 message",
                "item_start " + r + "-s2-2 function_call", "tool_status pending", "item_delta " + r + "-s2-2 x2",
                "item_done " + r + "-s2-2 function_call", "turn_status step_completed", "tool_status running",
                "item_start " + r + "-s2-out0 function_call_output", "item_done " + r + "-s2-out0 function_call_output",
                "tool_status completed",
                "item_start " + r + "-s3-0 message", "item_delta " + r + "-s3-0 x26", "item_done " + r + "-s3-0 message",
                "turn_status step_completed",
                "response_done");
        List<StreamPayload> payloads = raw.payloads(runId);
        assertThat(payloads.get(0)).isEqualTo(new StreamPayload.ResponseStart(runId, started.get("turnId").asText(),
                started.get("threadId").asText(), null, "turnstream-simulated", "simulated",
                ((StreamPayload.ResponseStart) payloads.get(0)).createdAt()));
        assertThat(finalItem(runId, runId + "-user-prompt")).isEqualTo(new OutputItem(runId + "-user-prompt",
                ItemType.MESSAGE, "What is in this workspace?", Origins.USER, null, null, null, null, null, null));
        OutputItem listCall = finalItem(runId, runId + "-s1-2");
        assertThat(listCall.name()).isEqualTo("list_files");
        assertThat(Json.parseOrText(listCall.arguments())).isEqualTo(Json.fromString("{\"path\":\".\"}", JsonNode.class));
        OutputItem listOutput = finalItem(runId, runId + "-s1-out0");
        assertThat(listOutput.callId()).isEqualTo(listCall.callId());
        assertThat(listOutput.output().asText()).isEqualTo("README.md\nsrc/\n");
        assertThat(listOutput.success()).isTrue();
        assertThat(Json.parseOrText(finalItem(runId, runId + "-s2-2").arguments()).get("path").asText()).isEqualTo("README.md");
        assertThat(finalItem(runId, runId + "-s3-0").content())
                .startsWith("`README.md` has 3 lines. It begins with:\n\n> # Demo workspace");
        assertThat(done.status()).isEqualTo(ResponseStatus.COMPLETE);
        assertThat(done.finishReason()).isEqualTo(FinishReasons.STOP);
        assertThat(done.usage().completionTokens()).isPositive();
        assertThat(done.usage().totalTokens()).isEqualTo(done.usage().promptTokens() + done.usage().completionTokens());
        assertEveryStartedItemIsClosedOnceAndNothingFollows(payloads);
        assertFinalContentIsTheStreamedText(payloads);
        assertRecordsFollowTheContract(runId);
        assertThat(status(started.get("turnId").asText())).isEqualTo("complete");
    }

    @Test
    void turnStopsAtItsStepLimitAfterPublishingTheToolResults() throws Exception {
        String runId = startTurn("{\"prompt\": \"Look around\", \"maxSteps\": 1}").get("runId").asText();

        StreamPayload.ResponseDone done = awaitDone(runId);

        assertThat(done.status()).isEqualTo(ResponseStatus.COMPLETE);
        assertThat(done.finishReason()).isEqualTo(FinishReasons.MAX_STEPS);
        assertThat(finalItem(runId, runId + "-s1-out0").output().asText()).isEqualTo("README.md\nsrc/\n");
    }

    @Test
    void cancelMidStreamAbortsTheTurnAndClosesItsOpenItem() throws Exception {
        JsonNode started = startTurn("{\"prompt\": \"slow: tell me a long story\", \"tools\": []}");
        String runId = started.get("runId").asText();
        String turnId = started.get("turnId").asText();
        await().atMost(TURN_TIMEOUT).until(() -> raw.payloads(runId).stream().anyMatch(p -> p instanceof StreamPayload.ItemDelta));
        assertThat(status(turnId)).isEqualTo("running");

        HttpResponse<String> cancel = post("/v1/turns/" + turnId + "/cancel", "{\"reason\": \"user pressed stop\"}");

        assertThat(cancel.statusCode()).isEqualTo(202);
        StreamPayload.ResponseDone done = awaitDone(runId);
        assertThat(done.status()).isEqualTo(ResponseStatus.ABORTED);
        List<StreamPayload> payloads = raw.payloads(runId);
        assertThat(payloads.get(payloads.size() - 2)).isEqualTo(new StreamPayload.ItemCancelled(runId + "-s1-0"));
        assertThat(payloads.get(payloads.size() - 1)).isSameAs(done);
        assertEveryStartedItemIsClosedOnceAndNothingFollows(payloads);
        await().atMost(TURN_TIMEOUT).until(() -> raw.controls().contains(ControlMessage.cancel(turnId, "user pressed stop")));
        await().atMost(TURN_TIMEOUT).until(() -> "aborted".equals(status(turnId)));
        HttpResponse<String> again = post("/v1/turns/" + turnId + "/cancel", "");
        assertThat(again.statusCode()).isEqualTo(409);
        assertThat(again.body()).contains("turn " + turnId + " has already finished with status aborted");
    }

    // ---- resilience ----

    @Test
    void rateLimitIsRetriedAfterRetryAfterThenSucceeds() throws Exception {
        long retriesBefore = gateway.metrics().get(GatewayMetrics.Counter.RETRIES);
        String runId = startTurn("{\"prompt\": \"rate-limited: hello\", \"tools\": []}").get("runId").asText();

        StreamPayload.ResponseDone done = awaitDone(runId);

        assertThat(done.status()).isEqualTo(ResponseStatus.COMPLETE);
        assertThat(attempts.get("rate-limited: hello")).hasValue(2);
        assertThat(shape(raw.payloads(runId))).containsExactly(
                "response_start",
                "item_start " + runId + "-user-prompt message", "item_done " + runId + "-user-prompt message",
                "turn_status retrying", "turn_status running",
                "item_start " + runId + "-s1-0 message", "item_delta " + runId + "-s1-0 x5",
                "item_done " + runId + "-s1-0 message",
                "turn_status step_completed",
                "response_done");
        assertThat(finalItem(runId, runId + "-s1-0").content()).isEqualTo("Recovered after a rate limit.");
        assertThat(gateway.metrics().get(GatewayMetrics.Counter.RETRIES)).isEqualTo(retriesBefore + 1);
    }

    @Test
    void aStallIsRetriedUntilTheRetryBudgetIsSpentThenFailsTheStepWithAClearError() throws Exception {
        long stallsBefore = gateway.metrics().get(GatewayMetrics.Counter.STALLS);
        String runId = startTurn("{\"prompt\": \"stall: hello\", \"tools\": []}").get("runId").asText();

        StreamPayload terminal = await().atMost(TURN_TIMEOUT).until(() -> raw.terminal(runId).orElse(null),
                t -> t != null);

        assertThat(terminal).isInstanceOf(StreamPayload.ResponseError.class);
        StreamPayload.ResponseError error = (StreamPayload.ResponseError) terminal;
        assertThat(error.error().code()).isEqualTo(ErrorCodes.STREAM_STALLED);
        assertThat(error.error().message()).isEqualTo("the provider sent nothing for 1000 ms; the model call was abandoned");
        List<StreamPayload> payloads = raw.payloads(runId);
        String r = runId;
        assertThat(shape(payloads)).as("each attempt's partial answer withdrawn, the last one failed").containsExactly(
                "response_start",
                "item_start " + r + "-user-prompt message", "item_done " + r + "-user-prompt message",
                "item_start " + r + "-s1-0 message", "item_delta " + r + "-s1-0 x5", "item_withdrawn " + r + "-s1-0",
                "turn_status stalled", "turn_status retrying", "turn_status running",
                "item_start " + r + "-s1-1 message", "item_delta " + r + "-s1-1 x5", "item_withdrawn " + r + "-s1-1",
                "turn_status stalled", "turn_status retrying", "turn_status running",
                "item_start " + r + "-s1-2 message", "item_delta " + r + "-s1-2 x5", "item_withdrawn " + r + "-s1-2",
                "turn_status stalled", "turn_status retrying", "turn_status running",
                "item_start " + r + "-s1-3 message", "item_delta " + r + "-s1-3 x5", "item_error " + r + "-s1-3",
                "turn_status stalled",
                "response_error");
        assertThat(payloads).filteredOn(p -> p instanceof StreamPayload.TurnStatus t && t.status() == TurnActivity.RETRYING)
                .extracting(p -> ((StreamPayload.TurnStatus) p).attempt()).containsExactly(2, 3, 4);
        assertThat(attempts.get("stall: hello")).hasValue(4);
        assertThat(gateway.metrics().get(GatewayMetrics.Counter.STALLS)).isEqualTo(stallsBefore + 4);
        assertEveryStartedItemIsClosedOnceAndNothingFollows(payloads);
    }

    @Test
    void aStreamThatBreaksAfterOutputStartedIsWithdrawnAndCalledAgain() throws Exception {
        String runId = startTurn("{\"prompt\": \"flaky: hello\", \"tools\": []}").get("runId").asText();

        StreamPayload.ResponseDone done = awaitDone(runId);

        assertThat(done.status()).isEqualTo(ResponseStatus.COMPLETE);
        String r = runId;
        assertThat(shape(raw.payloads(runId))).containsExactly(
                "response_start",
                "item_start " + r + "-user-prompt message", "item_done " + r + "-user-prompt message",
                "item_start " + r + "-s1-0 message", "item_delta " + r + "-s1-0 x3", "item_withdrawn " + r + "-s1-0",
                "turn_status retrying", "turn_status running",
                "item_start " + r + "-s1-1 message", "item_delta " + r + "-s1-1 x5", "item_done " + r + "-s1-1 message",
                "turn_status step_completed",
                "response_done");
        assertThat(finalItem(runId, runId + "-s1-1").content()).isEqualTo("Recovered after a broken stream.");
        StreamPayload.TurnStatus retrying = (StreamPayload.TurnStatus) raw.payloads(runId).stream()
                .filter(p -> p instanceof StreamPayload.TurnStatus).findFirst().orElseThrow();
        assertThat(retrying.attempt()).isEqualTo(2);
        assertThat(retrying.delayMs()).isPositive();
        assertThat(retrying.error().code()).isEqualTo("overloaded_error");
    }

    @Test
    void aStallMidStreamFallsBackToTheFallbackModelWhichIsReported() throws Exception {
        String runId = startTurn("{\"prompt\": \"stall-fallback: hi\", \"tools\": [], \"fallbackModel\": \""
                + FALLBACK_MODEL + "\"}").get("runId").asText();

        StreamPayload.ResponseDone done = awaitDone(runId);

        assertThat(done.status()).isEqualTo(ResponseStatus.COMPLETE);
        assertThat(done.modelId()).isEqualTo(FALLBACK_MODEL);
        assertThat(finalItem(runId, runId + "-s1-1").content()).isEqualTo("Answered by " + FALLBACK_MODEL + ".");
        List<StreamPayload> statuses = raw.payloads(runId).stream().filter(p -> p instanceof StreamPayload.TurnStatus).toList();
        assertThat(statuses).extracting(p -> ((StreamPayload.TurnStatus) p).status())
                .containsExactly(TurnActivity.STALLED, TurnActivity.FALLBACK, TurnActivity.RUNNING, TurnActivity.STEP_COMPLETED);
        StreamPayload.TurnStatus fallback = (StreamPayload.TurnStatus) statuses.get(1);
        assertThat(fallback.fromModel()).isEqualTo("turnstream-simulated");
        assertThat(fallback.toModel()).isEqualTo(FALLBACK_MODEL);
    }

    @Test
    void cancelDuringTheBackoffWaitEndsTheTurnWithoutCallingAgain() throws Exception {
        JsonNode started = startTurn("{\"prompt\": \"rate-limited-long: hi\", \"tools\": []}");
        String runId = started.get("runId").asText();
        await().atMost(TURN_TIMEOUT).until(() -> raw.payloads(runId).stream()
                .anyMatch(p -> p instanceof StreamPayload.TurnStatus t && t.status() == TurnActivity.RETRYING));

        HttpResponse<String> cancel = post("/v1/turns/" + started.get("turnId").asText() + "/cancel", "{}");

        assertThat(cancel.statusCode()).isEqualTo(202);
        StreamPayload.ResponseDone done = awaitDone(runId);
        assertThat(done.status()).isEqualTo(ResponseStatus.ABORTED);
        assertThat(attempts.get("rate-limited-long: hi")).hasValue(1);
        StreamPayload.TurnStatus retrying = (StreamPayload.TurnStatus) raw.payloads(runId).stream()
                .filter(p -> p instanceof StreamPayload.TurnStatus).findFirst().orElseThrow();
        assertThat(retrying.delayMs()).isEqualTo(20_000);
    }

    @Test
    void anAnswerCutOffAtTheTokenLimitIsContinued() throws Exception {
        String runId = startTurn("{\"prompt\": \"truncated: tell me\", \"tools\": [], \"maxSteps\": 1}")
                .get("runId").asText();

        StreamPayload.ResponseDone done = awaitDone(runId);

        assertThat(done.finishReason()).isEqualTo(FinishReasons.STOP);
        assertThat(finalItem(runId, runId + "-s1-0").content()).as("the continuations join the same message")
                .isEqualTo("Part 1.Part 2.The end.");
        List<StreamPayload> payloads = raw.payloads(runId);
        assertThat(payloads).as("one message item, opened once and closed once")
                .noneMatch(p -> p instanceof StreamPayload.ItemStart start && start.itemId().startsWith(runId + "-s2"))
                .filteredOn(p -> p instanceof StreamPayload.ItemDone d && d.itemId().equals(runId + "-s1-0")).hasSize(1);
        assertThat(payloads).filteredOn(p -> p instanceof StreamPayload.TurnStatus t && t.status() == TurnActivity.CONTINUING)
                .hasSize(2);
        assertFinalContentIsTheStreamedText(payloads);
    }

    @Test
    void continuationStopsAfterThreeTimesWithFinishReasonLength() throws Exception {
        String runId = startTurn("{\"prompt\": \"endless: tell me\", \"tools\": []}").get("runId").asText();

        StreamPayload.ResponseDone done = awaitDone(runId);

        assertThat(done.finishReason()).isEqualTo(FinishReasons.LENGTH);
        assertThat(attempts.get("endless: tell me")).hasValue(1 + MaxTokensContinuation.LIMIT);
    }

    @Test
    void overloadedModelFallsBackToTheFallbackModel() throws Exception {
        long fallbacksBefore = gateway.metrics().get(GatewayMetrics.Counter.FALLBACKS);
        String runId = startTurn("{\"prompt\": \"overloaded: hi\", \"tools\": [], \"fallbackModel\": \"" + FALLBACK_MODEL
                + "\"}").get("runId").asText();

        StreamPayload.ResponseDone done = awaitDone(runId);

        assertThat(done.status()).isEqualTo(ResponseStatus.COMPLETE);
        assertThat(finalItem(runId, runId + "-s1-0").content()).isEqualTo("Answered by " + FALLBACK_MODEL + ".");
        assertThat(gateway.metrics().get(GatewayMetrics.Counter.FALLBACKS)).isEqualTo(fallbacksBefore + 1);
    }

    // ---- usage, cost and prompt caching ----

    @Test
    void usageOfEveryStepIsReportedPricedAndSummedWithTheCacheHits() throws Exception {
        String runId = startTurn("{\"prompt\": \"cached: what is here?\", \"system\": \"You are terse.\"}")
                .get("runId").asText();

        StreamPayload.ResponseDone done = awaitDone(runId);

        List<StreamPayload.Usage> steps = raw.payloads(runId).stream()
                .filter(p -> p instanceof StreamPayload.TurnStatus t && t.status() == TurnActivity.STEP_COMPLETED)
                .map(p -> ((StreamPayload.TurnStatus) p).usage()).toList();
        assertThat(steps).hasSize(2);
        StreamPayload.Usage first = steps.get(0);
        StreamPayload.Usage second = steps.get(1);
        assertThat(first.promptTokens()).isEqualTo(1000);
        assertThat(first.cacheWriteTokens()).isEqualTo(900);
        assertThat(first.cacheReadTokens()).isNull();
        assertThat(second.cacheReadTokens()).as("the second step reads the cached prefix").isEqualTo(900);
        assertThat(second.cacheWriteTokens()).isEqualTo(150);
        assertThat(first.costUsd()).isCloseTo((100 * 3 + 900 * 3.75 + first.completionTokens() * 15) / 1e6, within(1e-12));
        assertThat(second.costUsd()).isCloseTo((50 * 3 + 900 * 0.3 + 150 * 3.75 + second.completionTokens() * 15) / 1e6,
                within(1e-12));
        StreamPayload.Usage total = done.usage();
        assertThat(total.promptTokens()).isEqualTo(2100);
        assertThat(total.completionTokens()).isEqualTo(first.completionTokens() + second.completionTokens());
        assertThat(total.totalTokens()).isEqualTo(total.promptTokens() + total.completionTokens());
        assertThat(total.cacheReadTokens()).isEqualTo(900);
        assertThat(total.cacheWriteTokens()).isEqualTo(1050);
        assertThat(total.costUsd()).isCloseTo(first.costUsd() + second.costUsd(), within(1e-12));
    }

    @Test
    void anthropicRequestsMarkSystemToolsAndTheConversationPrefixForCaching() throws Exception {
        awaitDone(startTurn("{\"prompt\": \"cached: mark it\", \"system\": \"You are terse.\"}").get("runId").asText());

        JsonNode body = lastRequest.get("cached: mark it");
        JsonNode ephemeral = Json.MAPPER.createObjectNode().put("type", "ephemeral");
        assertThat(body.at("/system/0/text").asText()).isEqualTo("You are terse.");
        assertThat(body.at("/system/0/cache_control")).isEqualTo(ephemeral);
        JsonNode tools = body.get("tools");
        assertThat(tools.get(tools.size() - 1).get("cache_control")).isEqualTo(ephemeral);
        JsonNode messages = body.get("messages");
        JsonNode lastBlocks = messages.get(messages.size() - 1).get("content");
        assertThat(lastBlocks.get(lastBlocks.size() - 1).get("type").asText()).isEqualTo("tool_result");
        assertThat(lastBlocks.get(lastBlocks.size() - 1).get("cache_control")).isEqualTo(ephemeral);
        assertThat(body.toString().split("cache_control", -1)).as("at most 4 breakpoints").hasSizeLessThanOrEqualTo(5);
    }

    // ---- the HTTP API refuses what it cannot run ----

    @Test
    void invalidRequestsGetA4xxThatSaysWhy() throws Exception {
        assertRefused(post("/v1/turns", "{not json"), 400, "the body is not valid JSON");
        assertRefused(post("/v1/turns", "[1]"), 400, "the body must be a JSON object");
        assertRefused(post("/v1/turns", "{}"), 400, "give either 'prompt' (a string) or 'messages'");
        assertRefused(post("/v1/turns", "{\"prompt\": \"a\", \"messages\": []}"), 400, "not both");
        assertRefused(post("/v1/turns", "{\"prompt\": \"a\", \"max_steps\": 3}"), 400, "unknown field 'max_steps'");
        assertRefused(post("/v1/turns", "{\"prompt\": \"a\", \"maxSteps\": 0}"), 400, "'maxSteps' must be a whole number from 1 to 100");
        assertRefused(post("/v1/turns", "{\"messages\": [{\"role\": \"assistant\", \"content\": \"hi\"}]}"), 400,
                "the last message must be the user's");
        assertRefused(post("/v1/turns", "{\"messages\": [{\"role\": \"system\", \"content\": \"hi\"}]}"), 400,
                "messages[0].role must be 'user' or 'assistant'");
        assertRefused(post("/v1/turns", "{\"prompt\": \"a\", \"provider\": \"gemini\"}"), 400,
                "unknown provider 'gemini'; the providers are anthropic, openai, openai-chat, simulated");
        assertRefused(post("/v1/turns", "{\"prompt\": \"a\", \"provider\": \"anthropic\", \"model\": \"claude\"}"), 400,
                "provider 'anthropic' is not configured: set ANTHROPIC_API_KEY");
        assertRefused(post("/v1/turns", "{\"prompt\": \"a\", \"tools\": [{\"name\": \"bad name\"}]}"), 400,
                "tools[0].name must be 1 to 64 letters");
        assertRefused(post("/v1/turns/turn-nope/cancel", ""), 404, "no turn turn-nope on this gateway");
        assertRefused(get("/v1/turns/turn-nope"), 404, "no turn turn-nope on this gateway");
        assertRefused(get("/v2/nothing"), 404, "no route GET /v2/nothing");
    }

    // ---- what is accepted is run, and releases what it holds ----

    /**
     * The AI SDK sends an empty system message when the app sets none. Such chats used to be accepted, then
     * refused before they ran, keeping their permits: after 32 of them the gateway answered 429 to everyone.
     */
    @Test
    void chatsWithABlankSystemMessageRunAndReleaseTheirPermits() throws Exception {
        int limit = 32; // turnstream.gateway.tenant.max-concurrent-turns, the default
        List<String> chats = new ArrayList<>();
        for (int i = 0; i < limit; i++) {
            String chatId = "chat-blank-system-" + UUID.randomUUID();
            chats.add(chatId);
            assertThat(chat(chatId, "quick: hello " + i)).isEqualTo(200);
        }

        for (String chatId : chats) {
            await().atMost(TURN_TIMEOUT).until(() -> raw.runOfThread(chatId).flatMap(raw::terminal).isPresent());
            assertThat(raw.terminal(raw.runOfThread(chatId).orElseThrow()).orElseThrow())
                    .isInstanceOf(StreamPayload.ResponseDone.class);
        }
        assertThat(lastRequest.get("quick: hello 0").has("system"))
                .as("a blank system message says nothing to the model").isFalse();
        // the last permit comes back just after the last turn's end is on Kafka
        await("every permit comes back: the gateway takes new chats").atMost(TURN_TIMEOUT)
                .until(() -> chat("chat-after-" + UUID.randomUUID(), "quick: and one more") == 200);
    }

    /**
     * A request on {@code llm.turn-requests} was validated by the gateway that accepted it; one that still
     * cannot run on the gateway owning its partition (here: its provider is not configured on this one)
     * ends with {@code response_error}, which every gateway sees, instead of being skipped for ever.
     */
    @Test
    void aRequestThatCannotRunWhereItIsOwnedEndsTheTurnWithAnError() throws Exception {
        String turnId = "turn-" + UUID.randomUUID();
        String runId = "run-" + UUID.randomUUID();
        String threadId = "thread-" + UUID.randomUUID();
        JsonNode request = Json.MAPPER.createObjectNode().put("provider", "anthropic").put("model", "claude")
                .put("prompt", "accepted where Anthropic is configured");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, stack.bootstrapServers()),
                new StringSerializer(), new StringSerializer())) {
            producer.send(new ProducerRecord<>(Topics.DEFAULTS.turnRequests(), threadId, Json.toString(
                    TurnRequestRecord.request(turnId, threadId, runId, null, System.currentTimeMillis(), request)))).get();
        }

        await().atMost(TURN_TIMEOUT).until(() -> raw.terminal(runId).isPresent());
        List<StreamPayload> payloads = raw.payloads(runId);
        assertThat(payloads).hasSize(2);
        assertThat(payloads.get(0)).isInstanceOfSatisfying(StreamPayload.ResponseStart.class,
                start -> assertThat(start.turnId()).isEqualTo(turnId));
        assertThat(payloads.get(1)).isInstanceOfSatisfying(StreamPayload.ResponseError.class, error -> {
            assertThat(error.error().code()).isEqualTo(ErrorCodes.TURN_CANNOT_RUN);
            assertThat(error.error().message()).contains("provider 'anthropic' is not configured");
        });
        await().atMost(TURN_TIMEOUT).until(() -> gateway.commands().status(turnId)
                .map(status -> status.status() == TurnPhase.ERROR).orElse(false));
    }

    @Test
    void metricsAreServedAsJsonOnTheManagementPort() throws Exception {
        HttpResponse<String> metrics = http.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + gateway.managementPort() + "/metrics")).GET().build(),
                HttpResponse.BodyHandlers.ofString());

        assertThat(metrics.statusCode()).isEqualTo(200);
        JsonNode counters = Json.fromString(metrics.body(), JsonNode.class);
        assertThat(counters.has("retries")).isTrue();
        assertThat(counters.has("fallbacks")).isTrue();
        assertThat(counters.has("stalls")).isTrue();
    }

    // ---- helpers ----

    private static JsonNode startTurn(String body) throws Exception {
        HttpResponse<String> response = post("/v1/turns", body);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(202);
        return Json.fromString(response.body(), JsonNode.class);
    }

    private static StreamPayload.ResponseDone awaitDone(String runId) {
        StreamPayload terminal = await().atMost(TURN_TIMEOUT).until(() -> raw.terminal(runId).orElse(null), t -> t != null);
        assertThat(terminal).as("terminal event of %s", runId).isInstanceOf(StreamPayload.ResponseDone.class);
        return (StreamPayload.ResponseDone) terminal;
    }

    private static OutputItem finalItem(String runId, String itemId) {
        return raw.payloads(runId).stream()
                .filter(p -> p instanceof StreamPayload.ItemDone d && d.itemId().equals(itemId))
                .map(p -> ((StreamPayload.ItemDone) p).finalItem())
                .findFirst().orElseThrow(() -> new AssertionError("no item_done for " + itemId));
    }

    /** Every record: keyed by the run id, snake case, {@code payload.type == type}. */
    private static void assertRecordsFollowTheContract(String runId) {
        assertThat(raw.keyOf(runId)).isEqualTo(runId);
        for (JsonNode record : raw.json(runId)) {
            assertThat(record.get("run_id").asText()).isEqualTo(runId);
            assertThat(record.at("/payload/type").asText()).isEqualTo(record.get("type").asText());
            assertThat(record.hasNonNull("event_id")).isTrue();
            assertThat(record.get("timestamp").asLong()).isPositive();
        }
        for (StreamEvent event : raw.events(runId)) {
            if (event.payload() instanceof StreamPayload.ItemDone done
                    && done.finalItem().knownType() == ItemType.FUNCTION_CALL) {
                assertThat(done.finalItem().arguments().isTextual()).as("arguments are JSON text").isTrue();
            }
        }
    }

    @Test
    void aRetriedPostWithItsIdempotencyKeyGetsTheSameTurnAndAnotherBodyIs422() throws Exception {
        String body = "{\"prompt\": \"Hello once\", \"tools\": []}";
        HttpResponse<String> first = postWithKey(body, "retry-1");
        HttpResponse<String> retried = postWithKey(body, "retry-1");

        assertThat(first.statusCode()).isEqualTo(202);
        assertThat(retried.statusCode()).isEqualTo(202);
        assertThat(Json.fromString(retried.body(), JsonNode.class).get("turnId"))
                .isEqualTo(Json.fromString(first.body(), JsonNode.class).get("turnId"));
        assertThat(retried.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertRefused(postWithKey("{\"prompt\": \"Hello twice\", \"tools\": []}", "retry-1"), 422,
                "Idempotency-Key 'retry-1' was used for a different request");
    }

    private static HttpResponse<String> postWithKey(String body, String key) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(gateway.baseUrl() + "/v1/turns"))
                .header("content-type", "application/json").header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static void assertRefused(HttpResponse<String> response, int status, String messageStart) {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
        assertThat(Json.fromString(response.body(), JsonNode.class).get("error").asText()).contains(messageStart);
    }

    private static String status(String turnId) throws Exception {
        return Json.fromString(get("/v1/turns/" + turnId).body(), JsonNode.class).get("status").asText();
    }

    private static HttpResponse<String> post(String path, String body) throws Exception {
        return GatewayHttp.post(gateway, path, body);
    }

    /** Posts a chat as the AI SDK does when the app sets no system prompt; returns the status. */
    private static int chat(String chatId, String text) throws Exception {
        String body = "{\"id\": \"" + chatId + "\", \"trigger\": \"submit-message\", \"messages\": ["
                + "{\"role\": \"system\", \"content\": \"\"}, {\"role\": \"user\", \"parts\": "
                + "[{\"type\": \"text\", \"text\": \"" + text + "\"}]}]}";
        HttpResponse<InputStream> response = http.send(HttpRequest.newBuilder(URI.create(gateway.baseUrl() + "/api/chat"))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofInputStream());
        response.body().close();
        return response.statusCode();
    }

    private static HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(gateway.baseUrl() + path)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
