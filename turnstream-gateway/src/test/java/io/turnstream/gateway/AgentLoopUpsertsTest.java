package io.turnstream.gateway;

import static io.turnstream.gateway.TurnUpserts.indexOf;
import static io.turnstream.gateway.TurnUpserts.toolOutput;
import static io.turnstream.gateway.TurnUpserts.toolStatuses;
import static io.turnstream.gateway.TurnUpserts.turnStatuses;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.gateway.provider.FinishReasons;
import io.turnstream.gateway.sim.SimulatedAnthropicServer;
import io.turnstream.gateway.sim.SimulatedReply;
import io.turnstream.gateway.sim.SimulatedRequest;
import io.turnstream.model.ChangeType;
import io.turnstream.model.Json;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.Topics;
import io.turnstream.model.UIStatus;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiItemType;
import io.turnstream.model.UiPayloadType;
import io.turnstream.model.UpsertEnvelope;
import io.turnstream.runtime.UpsertLog;
import io.turnstream.testsupport.UsesBroker;
import io.turnstream.tools.Tool;
import io.turnstream.tools.ToolContext;
import io.turnstream.tools.ToolRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent loop as a UI sees it on {@code llm.upserts}: the real topology and tool executor on an
 * embedded broker, the gateway calling the simulated provider. Tool calls go pending, running,
 * completed or error, and every call ends with a tool output, also when the turn is cancelled or
 * the executor never answers.
 */
@UsesBroker
class AgentLoopUpsertsTest {

    private static final Duration TURN_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration TOOL_RESULT_TIMEOUT = Duration.ofSeconds(4);

    @TempDir
    static Path home;

    @RegisterExtension
    static final BrokerStack stack = new BrokerStack();
    private static Path workspace;
    private static Gateway gateway;
    private static final String IMPATIENT_TURN_REQUESTS = "impatient.turn-requests";
    /** A second gateway that waits only {@link #TOOL_RESULT_TIMEOUT} for tool results. */
    private static Gateway impatientGateway;
    private static UpsertLog upserts;
    private static final HttpClient http = HttpClient.newHttpClient();
    /** Holds the {@code wait} tool until the test (or the tool's own timeout) lets it go. */
    private static final CountDownLatch waitingToolGate = new CountDownLatch(1);
    private static final String FALLBACK_MODEL = "turnstream-simulated-fallback";
    /** Requests the provider received per prompt, for scripts that answer differently the second time. */
    private static final Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();
    private static final long FIRST_STEP_INPUT = 1_000;
    private static final long FAILING_CALL_INPUT = 100;

    @BeforeAll
    static void startEverything() throws Exception {
        stack.broker(2);
        stack.createTopics(Topics.from(impatientTopics()), 2);
        stack.topology("agent-loop-upserts", home.resolve("state"));
        workspace = home.resolve("workspace");
        stack.executor(workspace, ToolRegistry.installed().plus(new WaitTool()), Map.of());
        SimulatedAnthropicServer provider = stack.closing(
                SimulatedAnthropicServer.start(0, AgentLoopUpsertsTest::script, 0));
        Properties settings = stack.gatewaySettings();
        // long enough that no stream of a loaded machine (2 cores, CI) stalls unless the script says so
        settings.put("turnstream.gateway.stall-timeout-ms", "5000");
        settings.put("turnstream.gateway.retry.base-delay-ms", "50");
        settings.put("turnstream.gateway.price.turnstream-simulated", "3,15");
        gateway = stack.gateway(settings, provider);
        // Gateways in one group share their turns; this one must run the turns it accepts with its own timeout.
        settings.put("turnstream.gateway.tool-result-timeout-ms", String.valueOf(TOOL_RESULT_TIMEOUT.toMillis()));
        settings.put("turnstream.gateway.group-id", "impatient-gateway");
        settings.put(Topics.PREFIX + "turn-requests", IMPATIENT_TURN_REQUESTS);
        impatientGateway = stack.gateway(settings, provider);
        upserts = stack.upserts();
    }

    @AfterAll
    static void letTheWaitingToolGo() {
        waitingToolGate.countDown();
    }

    /**
     * One tool call named by the prompt's first word, then an answer quoting the tool's output; or a
     * provider failure to recover from: {@code flaky:} breaks the first answer after three tokens,
     * {@code stall:} stalls unless the fallback model answers.
     */
    private static SimulatedReply script(SimulatedRequest request) {
        String first = request.firstUserText();
        int attempt = attempts.computeIfAbsent(first, p -> new AtomicInteger()).incrementAndGet();
        if (first.startsWith("flaky:")) {
            return attempt == 1
                    ? SimulatedReply.answer().text("This answer breaks off after three words").failAfterTokens(3, "overloaded_error")
                    : SimulatedReply.answer().text("Recovered.");
        }
        if (first.startsWith("stall:")) {
            return FALLBACK_MODEL.equals(request.model())
                    ? SimulatedReply.answer().text("Answered by the fallback.")
                    : SimulatedReply.answer().text("This answer stalls after three words").stallAfterTokens(3);
        }
        if (first.startsWith("write-then-break:")) {
            if (!request.lastToolResults().isEmpty()) {
                return SimulatedReply.answer().text("Wrote kept.txt.");
            }
            return attempt == 1
                    ? SimulatedReply.answer().text("Writing it now.")
                            .toolUse("write_file", fileArgs("withdrawn.txt", "must never be written"))
                            .failAfterBlocks("overloaded_error")
                    : SimulatedReply.answer().toolUse("write_file", fileArgs("kept.txt", "written once"));
        }
        if (first.startsWith("read-then-fail:")) {
            // a step that completes, then a step whose every attempt breaks after using its input
            return request.lastToolResults().isEmpty()
                    ? SimulatedReply.answer().toolUse("read_file", args("path", "README.md")).usage(FIRST_STEP_INPUT, null, null)
                    : SimulatedReply.answer().text("This answer breaks off after three words")
                            .failAfterTokens(3, "overloaded_error").usage(FAILING_CALL_INPUT, null, null);
        }
        List<SimulatedRequest.ToolResultView> results = request.lastToolResults();
        if (!results.isEmpty()) {
            return SimulatedReply.answer().text("The tool said: " + results.get(0).content());
        }
        String prompt = request.lastUserText();
        if (prompt.startsWith("missing:")) {
            return SimulatedReply.answer().toolUse("read_file", args("path", "no-such-file.txt"));
        }
        if (prompt.startsWith("wait:")) {
            return SimulatedReply.answer().toolUse("wait", args("why", prompt));
        }
        return SimulatedReply.answer().text("Let me read it.").toolUse("read_file", args("path", "README.md"));
    }

    @Test
    void aToolCallGoesPendingRunningCompletedAndTheTurnSaysWhyItStopped() throws Exception {
        String turnId = startTurn("read: what is in README.md?");

        List<UpsertEnvelope> turn = upserts.awaitEnd(turnId, TURN_TIMEOUT);

        List<UIStatus> tool = toolStatuses(turn);
        assertThat(tool).as("%s", tool).extracting(UIStatus::status).containsExactly("pending", "running", "completed");
        assertThat(tool).extracting(UIStatus::toolName).containsOnly("read_file");
        UIStatus completed = tool.get(2);
        assertThat(completed.startedAt()).isEqualTo(tool.get(1).startedAt()).isPositive();
        assertThat(completed.completedAt()).isGreaterThanOrEqualTo(completed.startedAt());
        UIUpsert output = toolOutput(turn);
        assertThat(output.callId()).isEqualTo(completed.callId());
        assertThat(output.success()).isTrue();
        assertThat(statusIndex(turn, "running")).isLessThan(indexOf(turn, output));
        UITurnEvent completedTurn = (UITurnEvent) turn.get(turn.size() - 1).payload();
        assertThat(completedTurn.type()).isEqualTo(UiPayloadType.TURN_COMPLETED);
        assertThat(completedTurn.finishReason()).isEqualTo(FinishReasons.STOP);
        assertThat(completedTurn.modelId()).isEqualTo("turnstream-simulated");
    }

    @Test
    void aFailedToolCallReachesTheUpsertsAsAnUnsuccessfulOutput() throws Exception {
        String turnId = startTurn("missing: read a file that is not there");

        List<UpsertEnvelope> turn = upserts.awaitEnd(turnId, TURN_TIMEOUT);

        UIUpsert output = toolOutput(turn);
        assertThat(output.success()).isFalse();
        assertThat(Json.asText(output.toolOutput())).containsIgnoringCase("no-such-file.txt");
        assertThat(toolStatuses(turn)).extracting(UIStatus::status).containsExactly("pending", "running", "error");
        assertThat(toolStatuses(turn).get(2).error()).isNotNull();
    }

    @Test
    void cancellingWhileAToolRunsEndsTheCallWithAnAbortedOutputAndTheTurnWithWhatItSpent() throws Exception {
        String turnId = startTurn("wait: until I cancel");
        await().atMost(TURN_TIMEOUT).until(() -> statusIndex(upserts.turn(turnId), "running") >= 0);

        HttpResponse<String> cancel = post("/v1/turns/" + turnId + "/cancel", "{\"reason\": \"user pressed stop\"}");

        assertThat(cancel.statusCode()).isEqualTo(202);
        List<UpsertEnvelope> turn = upserts.awaitEnd(turnId, TURN_TIMEOUT);
        UIUpsert output = toolOutput(turn);
        assertThat(output.success()).isFalse();
        assertThat(Json.asText(output.toolOutput())).isEqualTo("aborted: user pressed stop");
        assertThat(toolStatuses(turn)).extracting(UIStatus::status).containsExactly("pending", "running", "aborted");
        UITurnEvent end = (UITurnEvent) turn.get(turn.size() - 1).payload();
        assertThat(end.status()).isEqualTo(ResponseStatus.ABORTED);
        assertThat(end.usage().costUsd()).as("a cancelled turn's spend: its step that called the tool").isPositive();
    }

    @Test
    void aToolCallWithoutAResultInTimeStillEndsWithAnOutput() throws Exception {
        String turnId = startTurn(impatientGateway, "wait: and nobody cancels");

        List<UpsertEnvelope> turn = upserts.awaitEnd(turnId, TURN_TIMEOUT);

        UIUpsert output = toolOutput(turn);
        assertThat(output.success()).isFalse();
        assertThat(Json.asText(output.toolOutput())).startsWith("timed out");
        assertThat(toolStatuses(turn).get(toolStatuses(turn).size() - 1).status()).isEqualTo("error");
        UITurnEvent end = (UITurnEvent) turn.get(turn.size() - 1).payload();
        assertThat(end.type()).isEqualTo(UiPayloadType.TURN_ERROR);
        assertThat(end.error().code()).isEqualTo("TOOL_RESULT_TIMEOUT");
    }

    // ---- turn status: recovery and usage as the UI sees them ----

    @Test
    void aRetryAfterPartialOutputShowsAsRetryingThenRunningAndTheWithdrawnAnswerIsCancelled() throws Exception {
        String turnId = startTurn("flaky: say something");

        List<UpsertEnvelope> turn = upserts.awaitEnd(turnId, TURN_TIMEOUT);

        List<UIStatus> statuses = turnStatuses(turn);
        assertThat(statuses).extracting(UIStatus::status).containsExactly("retrying", "running", "step_completed");
        UIStatus retrying = statuses.get(0);
        assertThat(retrying.attempt()).isEqualTo(2);
        assertThat(retrying.delayMs()).isPositive();
        assertThat(retrying.error().code()).isEqualTo("overloaded_error");
        List<UIUpsert> messages = turn.stream().map(UpsertEnvelope::payload)
                .filter(p -> p instanceof UIUpsert u && u.itemType() == UiItemType.MESSAGE && !"user".equals(u.origin()))
                .map(p -> (UIUpsert) p).toList();
        assertThat(messages).filteredOn(u -> u.changeType() == ChangeType.COMPLETED).extracting(UIUpsert::content)
                .as("the broken answer is withdrawn, never completed").containsExactly("Recovered.");
        UITurnEvent end = (UITurnEvent) turn.get(turn.size() - 1).payload();
        assertThat(end.status()).isEqualTo(ResponseStatus.COMPLETE);
        assertThat(end.usage().costUsd()).as("priced at 3 and 15 USD per million tokens")
                .isEqualTo((end.usage().promptTokens() * 3 + end.usage().completionTokens() * 15) / 1e6);
    }

    @Test
    void aStallShowsAsStalledThenFallbackAndTheTurnNamesTheModelThatAnswered() throws Exception {
        String turnId = startTurn("stall: answer me", FALLBACK_MODEL);

        List<UpsertEnvelope> turn = upserts.awaitEnd(turnId, TURN_TIMEOUT);

        List<UIStatus> statuses = turnStatuses(turn);
        assertThat(statuses).extracting(UIStatus::status).containsExactly("stalled", "fallback", "running", "step_completed");
        assertThat(statuses.get(0).error().code()).isEqualTo("STREAM_STALLED");
        assertThat(statuses.get(1).fromModel()).isEqualTo("turnstream-simulated");
        assertThat(statuses.get(1).toModel()).isEqualTo(FALLBACK_MODEL);
        assertThat(statuses.get(3).modelId()).isEqualTo(FALLBACK_MODEL);
        assertThat(statuses.get(3).usage().promptTokens()).isPositive();
        UITurnEvent end = (UITurnEvent) turn.get(turn.size() - 1).payload();
        assertThat(end.modelId()).isEqualTo(FALLBACK_MODEL);
    }

    /**
     * The stream breaks after a whole write_file block: the attempt is withdrawn and made again. Its
     * call never reaches the executor (the retry's call, on the same partition after it, does), and
     * nothing it showed stays: every item gets a withdrawn upsert, the turn's snapshot (from
     * llm.item-state) holds only the retry's items, and its usage is counted apart.
     */
    @Test
    void aStreamBrokenAfterAWholeWriteFileBlockWritesNothingAndLeavesNothingVisible() throws Exception {
        String turnId = startTurn("write-then-break: save a file");

        List<UpsertEnvelope> turn = upserts.awaitEnd(turnId, TURN_TIMEOUT);

        assertThat(workspace.resolve("kept.txt")).hasContent("written once");
        assertThat(workspace.resolve("withdrawn.txt")).as("the withdrawn attempt's call never ran").doesNotExist();
        List<UIUpsert> items = turn.stream().map(UpsertEnvelope::payload).filter(p -> p instanceof UIUpsert)
                .map(p -> (UIUpsert) p).toList();
        List<String> withdrawn = items.stream().filter(u -> u.changeType() == ChangeType.WITHDRAWN)
                .map(UIUpsert::itemId).toList();
        assertThat(withdrawn).as("the failed attempt's message and call").hasSize(2);
        assertThat(items).filteredOn(u -> u.itemType() == UiItemType.TOOL_CALL && u.changeType() == ChangeType.COMPLETED)
                .extracting(u -> u.toolArguments().path("path").asText()).containsExactly("kept.txt");
        assertThat(toolStatuses(turn)).extracting(UIStatus::status)
                .as("the withdrawn call's pending, then the retry's lifecycle")
                .containsExactly("pending", "pending", "running", "completed");
        UITurnEvent end = (UITurnEvent) turn.get(turn.size() - 1).payload();
        assertThat(end.status()).isEqualTo(ResponseStatus.COMPLETE);
        assertThat(end.failedAttemptsUsage().promptTokens()).as("the failed call's input, counted apart").isPositive();
        assertThat(end.failedAttemptsUsage().costUsd()).isPositive();
        await().atMost(TURN_TIMEOUT).untilAsserted(() -> {
            JsonNode snapshot = Json.fromString(get("/v1/turns/" + turnId).body(), JsonNode.class);
            assertThat(snapshot.get("status").asText()).isEqualTo("complete");
            List<String> shown = new ArrayList<>();
            snapshot.get("items").forEach(item -> shown.add(item.get("itemId").asText()));
            assertThat(shown).isNotEmpty().doesNotContainAnyElementsOf(withdrawn);
        });
    }

    /**
     * A turn whose second step fails after its failed attempts reports what it spent: the first step's usage,
     * and every failed call's (the last one's too) apart, priced, on its turn_error and in GET /v1/turns.
     */
    @Test
    void aTurnThatFailsAfterFailedAttemptsReportsItsUsageAndTheFailedCallsApart() throws Exception {
        String turnId = startTurn("read-then-fail: read README.md, then break");

        List<UpsertEnvelope> turn = upserts.awaitEnd(turnId, TURN_TIMEOUT);

        UITurnEvent end = (UITurnEvent) turn.get(turn.size() - 1).payload();
        assertThat(end.type()).isEqualTo(UiPayloadType.TURN_ERROR);
        assertThat(end.error().code()).isEqualTo("overloaded_error");
        int failedCalls = attempts.get("read-then-fail: read README.md, then break").get() - 1;
        assertThat(failedCalls).as("the step was retried before it failed").isGreaterThan(1);
        assertThat(end.usage().promptTokens()).as("the completed step's").isEqualTo(FIRST_STEP_INPUT);
        assertThat(end.failedAttemptsUsage().promptTokens()).as("every failed call once, the last one too")
                .isEqualTo(failedCalls * FAILING_CALL_INPUT);
        assertThat(end.failedAttemptsUsage().costUsd()).as("priced at 3 and 15 USD per million tokens")
                .isEqualTo((end.failedAttemptsUsage().promptTokens() * 3
                        + end.failedAttemptsUsage().completionTokens() * 15) / 1e6);
        await().atMost(TURN_TIMEOUT).untilAsserted(() -> {
            JsonNode snapshot = Json.fromString(get("/v1/turns/" + turnId).body(), JsonNode.class);
            assertThat(snapshot.get("status").asText()).isEqualTo("error");
            assertThat(snapshot.at("/turn/usage/promptTokens").asLong()).isEqualTo(FIRST_STEP_INPUT);
            assertThat(snapshot.at("/turn/failedAttemptsUsage/promptTokens").asLong())
                    .isEqualTo(failedCalls * FAILING_CALL_INPUT);
        });
    }

    // ---- helpers ----

    @Test
    void aThreadListsItsTurnsInOrderWithTheirToolCallsAndOutputs() throws Exception {
        String threadId = "thread-listed-" + System.nanoTime();
        String first = startTurnInThread("read: first question", threadId);
        upserts.awaitEnd(first, TURN_TIMEOUT);
        String second = startTurnInThread("read: second question", threadId);
        upserts.awaitEnd(second, TURN_TIMEOUT);

        await().atMost(TURN_TIMEOUT).untilAsserted(() -> {
            HttpResponse<String> response = get("/v1/threads/" + threadId);
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
            JsonNode turns = Json.fromString(response.body(), JsonNode.class).get("turns");
            assertThat(turns).extracting(turn -> turn.get("turnId").asText()).containsExactly(first, second);
            assertThat(turns).extracting(turn -> turn.get("status").asText()).containsOnly("complete");
            assertThat(turns.get(1).get("items")).extracting(item -> item.get("itemType").asText())
                    .contains("message", "tool_call", "tool_output");
            assertThat(turns.get(1).get("items")).extracting(item -> item.path("content").asText())
                    .contains("read: second question");
        });
        assertThat(get("/v1/threads/no-such-thread").statusCode()).isEqualTo(404);
    }

    private static String startTurnInThread(String prompt, String threadId) throws Exception {
        return GatewayHttp.startTurn(gateway, JsonNodeFactory.instance.objectNode().put("prompt", prompt)
                .put("threadId", threadId));
    }

    private static JsonNode fileArgs(String path, String content) {
        return JsonNodeFactory.instance.objectNode().put("path", path).put("content", content);
    }

    private static HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(gateway.baseUrl() + path)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static Properties impatientTopics() {
        Properties topics = new Properties();
        topics.put(Topics.PREFIX + "turn-requests", IMPATIENT_TURN_REQUESTS);
        return topics;
    }

    private static JsonNode args(String name, String value) {
        return JsonNodeFactory.instance.objectNode().put(name, value);
    }

    private static int statusIndex(List<UpsertEnvelope> turn, String status) {
        for (int i = 0; i < turn.size(); i++) {
            if (turn.get(i).payload() instanceof UIStatus s && status.equals(s.status())) {
                return i;
            }
        }
        return -1;
    }

    private static String startTurn(String prompt) throws Exception {
        return startTurn(gateway, prompt);
    }

    private static String startTurn(String prompt, String fallbackModel) throws Exception {
        return GatewayHttp.startTurn(gateway, JsonNodeFactory.instance.objectNode().put("prompt", prompt)
                .put("fallbackModel", fallbackModel));
    }

    private static String startTurn(Gateway on, String prompt) throws Exception {
        return GatewayHttp.startTurn(on, JsonNodeFactory.instance.objectNode().put("prompt", prompt));
    }

    private static HttpResponse<String> post(String path, String body) throws Exception {
        return GatewayHttp.post(gateway, path, body);
    }

    /** A tool that runs until it is interrupted (a cancel) or the test ends, whichever comes first. */
    private static final class WaitTool implements Tool {
        @Override
        public String name() {
            return "wait";
        }

        @Override
        public String description() {
            return "waits until it is stopped";
        }

        @Override
        public JsonNode inputSchema() {
            return JsonNodeFactory.instance.objectNode().put("type", "object");
        }

        @Override
        public boolean concurrencySafe() {
            return true;
        }

        @Override
        public Optional<Duration> timeout() {
            return Optional.of(TOOL_RESULT_TIMEOUT.multipliedBy(3));
        }

        @Override
        public JsonNode execute(JsonNode arguments, ToolContext context) throws Exception {
            waitingToolGate.await();
            return TextNode.valueOf("let go");
        }
    }
}
