package io.turnstream.gateway.provider;

import static io.turnstream.gateway.ItemInvariants.assertEveryStartedItemIsClosedOnceAndNothingFollows;
import static io.turnstream.gateway.ItemInvariants.assertFinalContentIsTheStreamedText;
import static io.turnstream.gateway.ItemInvariants.shape;
import static io.turnstream.gateway.provider.RecordedStreams.STEP;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.gateway.sse.SseEvent;
import io.turnstream.gateway.sse.SseFormat;
import io.turnstream.gateway.sse.SseReader;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.ItemType;
import io.turnstream.model.Json;
import io.turnstream.model.Origins;
import io.turnstream.model.OutputItem;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.ToolState;
import io.turnstream.model.StreamPayload.ItemDelta;
import io.turnstream.model.StreamPayload.ItemDone;
import io.turnstream.model.StreamPayload.ItemStart;
import io.turnstream.model.StreamPayload.Usage;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every recorded provider stream, served over HTTP on loopback and read by the real adapter: the
 * exact events for a representative set, and the contract's invariants for all of them.
 */
class RecordedProviderStreamsTest {

    private static final Set<String> FAILING = Set.of(
            "anthropic-docs-web-search-ELIDED.sse",
            "vercel-anthropic-SYNTH-spliced-message-start.sse",
            "vercel-responses-error-insufficient-quota.sse");

    private static RecordedStreams streams;

    @BeforeAll
    static void startServer() {
        streams = new RecordedStreams();
    }

    @AfterAll
    static void stopServer() {
        streams.close();
    }

    // ---- invariants, for every recording ----

    @ParameterizedTest
    @MethodSource("io.turnstream.gateway.provider.RecordedStreams#all")
    void everyRecordingKeepsTheContractInvariants(String fixture) {
        RecordedStreams.Played played = streams.play(fixture);

        assertThat(played.outcome().status()).isEqualTo(FAILING.contains(fixture)
                ? ResponseStatus.ERROR : ResponseStatus.COMPLETE);
        assertEveryStartedItemIsClosedOnceAndNothingFollows(played.payloads());
        assertFinalContentIsTheStreamedText(played.payloads());
        assertToolCallsAreTheDoneFunctionCalls(played);
        if (!fixture.contains("custom-tool")) {
            assertToolArgumentsParse(played.payloads());
        }
        if (played.outcome().status() == ResponseStatus.COMPLETE) {
            assertThat(tokens(played.outcome().usage())).isEqualTo(lastReportedUsage(fixture));
        }
    }

    // ---- exact sequences, for a representative set ----

    @Test
    void anthropicTextThenToolUse() {
        RecordedStreams.Played played = streams.play("anthropic-docs-tool-use.sse");

        List<StreamPayload> expected = new ArrayList<>();
        expected.add(start(0, ItemType.MESSAGE));
        expected.addAll(deltas(0, "Okay", ",", " let", "'s", " check", " the", " weather", " for", " San",
                " Francisco", ",", " CA", ":"));
        expected.add(done(0, ItemType.MESSAGE, "Okay, let's check the weather for San Francisco, CA:", "anthropic"));
        expected.add(startCall(1, "get_weather", "toolu_01T1x1fJ34qAmk2tNTrN7Up6"));
        expected.add(pending(1, "get_weather", "toolu_01T1x1fJ34qAmk2tNTrN7Up6"));
        expected.addAll(deltas(1, "{\"location\":", " \"San", " Francisc", "o,", " CA\"", ", ",
                "\"unit\": \"fah", "renheit\"}"));
        expected.add(doneCall(1, "get_weather", "{\"location\": \"San Francisco, CA\", \"unit\": \"fahrenheit\"}",
                "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "anthropic"));
        assertThat(played.payloads()).containsExactlyElementsOf(expected);
        assertThat(played.outcome().finishReason()).isEqualTo(FinishReasons.TOOL_CALLS);
        assertThat(tokens(played.outcome().usage())).isEqualTo(new Usage(472, 89, 561));
        assertThat(played.outcome().assistantContent().get(1).get("input"))
                .isEqualTo(Json.fromString("{\"location\":\"San Francisco, CA\",\"unit\":\"fahrenheit\"}", JsonNode.class));
    }

    @Test
    void anthropicThinkingKeepsItsSignatureForTheNextStep() {
        RecordedStreams.Played played = streams.play("vercel-anthropic-thinking-signature.sse");

        List<StreamPayload> expected = new ArrayList<>();
        expected.add(start(0, ItemType.REASONING));
        expected.addAll(deltas(0, "The previous", " result", " was", " 925.", " Now", " I need to divide that",
                " by 5.\n\n925", " ÷ 5 ", "= 185"));
        expected.add(done(0, ItemType.REASONING, "The previous result was 925. Now I need to divide that by 5.\n\n925 ÷ 5 = 185",
                "anthropic"));
        expected.add(start(1, ItemType.MESSAGE));
        expected.addAll(deltas(1, "925", " ÷ 5 ", "= 185"));
        expected.add(done(1, ItemType.MESSAGE, "925 ÷ 5 = 185", "anthropic"));
        assertThat(played.payloads()).containsExactlyElementsOf(expected);
        assertThat(played.outcome().assistantContent().get(0).get("signature").asText())
                .startsWith("EvQBCkYICxgCKkAxhD4NUKFzudtZ6NzbZdEiBACIScTzqjPViM596iWLZIk4EFKYYBj3B6Ptl3b0dcQv")
                .endsWith("zNgvi/EhT6Ca17BgB");
    }

    @Test
    void anthropicMessageSplicedIntoAnOpenOneFailsTheStepWithoutRunningItsTool() {
        RecordedStreams.Played played = streams.play("vercel-anthropic-SYNTH-spliced-message-start.sse");

        ErrorInfo spliced = ErrorInfo.of(ErrorCodes.INVALID_RESPONSE,
                "the provider started message msg_second while message msg_first was still open");
        List<StreamPayload> expected = new ArrayList<>();
        expected.add(start(0, ItemType.REASONING));
        expected.addAll(deltas(0, "I will call the tool."));
        expected.add(done(0, ItemType.REASONING, "I will call the tool.", "anthropic"));
        expected.add(startCall(1, "test-tool", "toolu_first"));
        expected.add(pending(1, "test-tool", "toolu_first"));
        expected.addAll(deltas(1, "{\"value\":\"Spark"));
        expected.add(new StreamPayload.ToolStatus(STEP + "-1", "toolu_first", "test-tool", ToolState.ERROR, null, null,
                spliced));
        expected.add(new StreamPayload.ItemError(STEP + "-1", spliced));
        assertThat(played.payloads()).containsExactlyElementsOf(expected);
        assertThat(played.outcome().error()).isEqualTo(spliced);
        assertThat(played.outcome().toolCalls()).isEmpty();
    }

    @Test
    void anthropicDuplicateMessageStartIsIgnored() {
        RecordedStreams.Played played = streams.play("vercel-anthropic-SYNTH-duplicate-message-start.sse");

        assertThat(played.payloads()).containsExactly(
                start(0, ItemType.MESSAGE),
                delta(0, "Hello, World!"),
                done(0, ItemType.MESSAGE, "Hello, World!", "anthropic"));
        assertThat(tokens(played.outcome().usage())).isEqualTo(new Usage(17, 227, 244));
    }

    @Test
    void anthropicMessageWholeInsideMessageStartKeepsItsTextAndTheCallsRealArguments() {
        RecordedStreams.Played played = streams.play("anthropic-turnstream-SYNTH-message-start-text-and-call.sse");

        String text = "I'll total the sales of every region in one script.";
        String arguments = "{\"sql\":\"SELECT region, SUM(amount) FROM sales GROUP BY region\"}";
        assertThat(played.payloads()).containsExactly(
                new ItemStart(id(0), ItemType.MESSAGE, text, null, null, null, Origins.AGENT),
                done(0, ItemType.MESSAGE, text, "anthropic"),
                startCall(1, "query_database", "toolu_01PtcQuery"),
                pending(1, "query_database", "toolu_01PtcQuery"),
                new ItemDelta(id(1), arguments), // whole arguments stream as one fragment
                doneCall(1, "query_database", arguments, "toolu_01PtcQuery", "anthropic"));
        assertThat(played.outcome().finishReason()).isEqualTo(FinishReasons.TOOL_CALLS);
        assertThat(played.outcome().toolCalls()).containsExactly(
                new ToolCallRequest(id(1), "toolu_01PtcQuery", "query_database", arguments));
        JsonNode content = played.outcome().assistantContent();
        assertThat(content).hasSize(3);
        assertThat(content.get(1).path("input").path("code").asText()).startsWith("rows = await query_database(");
        assertThat(content.get(2).path("caller").path("tool_id").asText()).isEqualTo("srvtoolu_01PtcScript");
    }

    @Test
    void anthropicToolCallPrepopulatedInMessageStartRunsWithItsInput() {
        RecordedStreams.Played played = streams.play("vercel-anthropic-SYNTH-message-start-prepopulated.sse");

        assertThat(played.payloads()).containsExactly(
                startCall(0, "lookup_customer", "toolu_followup"),
                pending(0, "lookup_customer", "toolu_followup"),
                new ItemDelta(id(0), "{\"id\":\"customer_123\"}"),
                doneCall(0, "lookup_customer", "{\"id\":\"customer_123\"}", "toolu_followup", "anthropic"));
        assertThat(played.outcome().finishReason()).isEqualTo(FinishReasons.TOOL_CALLS);
        assertThat(played.outcome().assistantContent()).extracting(block -> block.path("type").asText())
                .containsExactly("code_execution_tool_result", "code_execution_tool_result", "tool_use");
    }

    @Test
    void anthropicPausedTurnIsContinuedBySendingThePausedContentBack() {
        RecordedStreams.Played played = streams.play("pause-turn", new AnthropicMessagesAdapter(),
                RecordedStreams.simpleRequest(), RecordedStreams.bytes("anthropic-turnstream-SYNTH-pause-turn.sse"),
                RecordedStreams.bytes("anthropic-turnstream-SYNTH-pause-turn-continued.sse"));

        List<StreamPayload> expected = new ArrayList<>();
        expected.add(start(0, ItemType.MESSAGE));
        expected.addAll(deltas(0, "I'll look up", " the latest Kafka release."));
        expected.add(done(0, ItemType.MESSAGE, "I'll look up the latest Kafka release.", "anthropic"));
        expected.add(start(1, ItemType.MESSAGE));
        expected.addAll(deltas(1, "The downloads page", " lists the latest release first."));
        expected.add(done(1, ItemType.MESSAGE, "The downloads page lists the latest release first.", "anthropic"));
        assertThat(played.payloads()).containsExactlyElementsOf(expected);
        assertThat(played.outcome().status()).isEqualTo(ResponseStatus.COMPLETE);
        assertThat(played.outcome().finishReason()).isEqualTo(FinishReasons.STOP);
        assertThat(tokens(played.outcome().usage())).isEqualTo(new Usage(2210 + 2750, 96 + 21, 2210 + 96 + 2750 + 21));

        JsonNode messages = played.request().path("messages");
        JsonNode resent = messages.get(messages.size() - 1);
        assertThat(resent.path("role").asText()).isEqualTo("assistant");
        assertThat(resent.path("content")).extracting(block -> block.path("type").asText())
                .containsExactly("text", "server_tool_use", "web_search_tool_result");
        assertThat(resent.path("content").get(1).path("input"))
                .isEqualTo(Json.fromString("{\"query\":\"Apache Kafka latest release\"}", JsonNode.class));
        assertThat(played.outcome().assistantContent()).extracting(block -> block.path("type").asText())
                .containsExactly("text", "server_tool_use", "web_search_tool_result", "text");
        assertThat(played.outcome().assistantContent().get(2).has("cache_control")).isFalse();
    }

    @Test
    void anthropicTurnThatKeepsPausingEndsAsPausedAfterTheResumeLimit() {
        RecordedStreams.Played played = streams.play("pause-forever", new AnthropicMessagesAdapter(),
                RecordedStreams.simpleRequest(), RecordedStreams.bytes("anthropic-turnstream-SYNTH-pause-turn.sse"));

        assertThat(played.outcome().status()).isEqualTo(ResponseStatus.COMPLETE);
        assertThat(played.outcome().finishReason()).isEqualTo(FinishReasons.PAUSE_TURN);
        assertThat(played.payloads()).filteredOn(p -> p instanceof ItemDone)
                .hasSize(1 + ProviderClient.PAUSE_RESUMES);
        assertEveryStartedItemIsClosedOnceAndNothingFollows(played.payloads());
    }

    @Test
    void chatContentAsTypedPartsKeepsTheThinkingAndTheText() {
        RecordedStreams.Played played = streams.play("vercel-mistral-reasoning-parts.sse");

        List<StreamPayload> expected = new ArrayList<>();
        expected.add(start(0, ItemType.REASONING));
        expected.addAll(deltas(0, "The user is asking", " for 2+2. This is basic arithmetic. 2+2=4."));
        expected.add(done(0, ItemType.REASONING, "The user is asking for 2+2. This is basic arithmetic. 2+2=4.",
                "openai-chat"));
        expected.add(start(1, ItemType.MESSAGE));
        expected.add(delta(1, "2 + 2 = 4"));
        expected.add(done(1, ItemType.MESSAGE, "2 + 2 = 4", "openai-chat"));
        assertThat(played.payloads()).containsExactlyElementsOf(expected);
        assertThat(played.outcome().finishReason()).isEqualTo(FinishReasons.STOP);
        assertThat(played.outcome().assistantContent().path("content").asText()).isEqualTo("2 + 2 = 4");
    }

    @Test
    void anthropicElidedRecordingIsReportedAsBadInput() {
        RecordedStreams.Played played = streams.play("anthropic-docs-web-search-ELIDED.sse");

        List<StreamPayload> expected = new ArrayList<>();
        expected.add(start(0, ItemType.MESSAGE));
        expected.addAll(deltas(0, "I'll check", " the current weather in New York City for you", "."));
        expected.add(done(0, ItemType.MESSAGE, "I'll check the current weather in New York City for you.", "anthropic"));
        assertThat(played.payloads()).containsExactlyElementsOf(expected);
        assertThat(played.outcome().error().code()).isEqualTo(ErrorCodes.BAD_PROVIDER_DATA);
        assertThat(played.outcome().error().message())
                .startsWith("bad input from the provider: the data of event 'content_block_start' is not valid JSON");
        assertThat(played.outcome().retryable()).isFalse();
    }

    @Test
    void anthropicUnknownBlockTypesAreNoOpsButKeptForTheNextStep() {
        RecordedStreams.Played played = streams.play("anthropic-pysdk-compaction_response.sse");

        assertThat(played.payloads()).containsExactly(
                start(0, ItemType.MESSAGE),
                delta(0, "Hello there!"),
                done(0, ItemType.MESSAGE, "Hello there!", "anthropic"));
        JsonNode compaction = played.outcome().assistantContent().get(0);
        assertThat(compaction.get("type").asText()).isEqualTo("compaction");
        assertThat(compaction.get("encrypted_content").asText()).isEqualTo("EpwBCioIDxgCEAEYASJALd_opaque_compaction_payload");
    }

    @Test
    void chatToolCallArgumentsAreAssembledByIndex() {
        RecordedStreams.Played played = streams.play("openai-chat-tool-call.sse");

        List<StreamPayload> expected = new ArrayList<>();
        expected.add(startCall(0, "GetWeatherArgs", "call_c91SqDXlYFuETYv8mUHzz6pp"));
        expected.add(pending(0, "GetWeatherArgs", "call_c91SqDXlYFuETYv8mUHzz6pp"));
        expected.addAll(deltas(0, "{\"", "city", "\":\"", "Ed", "inburgh", "\",\"", "country", "\":\"", "UK", "\",\"",
                "units", "\":\"", "c", "\"}"));
        expected.add(doneCall(0, "GetWeatherArgs", "{\"city\":\"Edinburgh\",\"country\":\"UK\",\"units\":\"c\"}",
                "call_c91SqDXlYFuETYv8mUHzz6pp", "openai-chat"));
        assertThat(played.payloads()).containsExactlyElementsOf(expected);
        assertThat(played.outcome().finishReason()).isEqualTo(FinishReasons.TOOL_CALLS);
        assertThat(tokens(played.outcome().usage())).isEqualTo(new Usage(76, 24, 100));
    }

    @Test
    void cacheAndReasoningCountsAreReportedWhereTheProviderGivesThem() {
        assertThat(streams.play("vercel-anthropic-text.sse").outcome().usage())
                .isEqualTo(new Usage(12, 30, 42, 0L, 0L, null, null));
        assertThat(streams.play("openai-chat-tool-call.sse").outcome().usage())
                .isEqualTo(new Usage(76, 24, 100, null, null, 0L, null));
        assertThat(streams.play("vercel-responses-reasoning-fc-part1.sse").outcome().usage())
                .isEqualTo(new Usage(134, 28, 162, 0L, null, 0L, null));
    }

    @Test
    void chatChunkWithoutChoicesIsANoOp() {
        RecordedStreams.Played played = streams.play("vercel-chat-azure-prompt-filter.sse");

        List<StreamPayload> expected = new ArrayList<>();
        expected.add(start(0, ItemType.MESSAGE));
        expected.addAll(deltas(0, "Capital", " of", " Denmark", "."));
        expected.add(done(0, ItemType.MESSAGE, "Capital of Denmark.", "openai-chat"));
        assertThat(played.payloads()).containsExactlyElementsOf(expected);
        assertThat(tokens(played.outcome().usage())).isEqualTo(new Usage(15, 78, 93));
    }

    @Test
    void responsesMessage() {
        RecordedStreams.Played played = streams.play("vercel-responses-reasoning-fc-part4.sse");

        List<StreamPayload> expected = new ArrayList<>();
        expected.add(start(0, ItemType.MESSAGE));
        expected.addAll(deltas(0, "The", " final", " result", " is", " **", "570", "**", "."));
        expected.add(done(0, ItemType.MESSAGE, "The final result is **570**.", "openai"));
        assertThat(played.payloads()).containsExactlyElementsOf(expected);
        assertThat(played.outcome().finishReason()).isEqualTo(FinishReasons.STOP);
    }

    @Test
    void responsesReasoningThenFunctionCallKeepsEncryptedReasoning() {
        RecordedStreams.Played played = streams.play("vercel-responses-reasoning-fc-part1.sse");

        assertThat(shape(played.payloads())).containsExactly(
                "item_start " + STEP + "-0 reasoning",
                "item_delta " + STEP + "-0 x32",
                "item_done " + STEP + "-0 reasoning",
                "item_start " + STEP + "-1 function_call",
                "tool_status pending",
                "item_delta " + STEP + "-1 x13",
                "item_done " + STEP + "-1 function_call");
        assertThat(played.payloads().get(played.payloads().size() - 1)).isEqualTo(doneCall(1, "calculator",
                "{\"a\":12,\"b\":7,\"op\":\"add\"}", "call_AB6AaRZ1FYZB2RwS6A5vbdqn", "openai"));
        JsonNode reasoning = played.outcome().assistantContent().get(0);
        assertThat(reasoning.get("encrypted_content").asText()).startsWith("gAAAAABpPDIVOKrsHNZ0GwsoEKA_IGfuJ5f8Ma_6");
        assertThat(played.outcome().finishReason()).isEqualTo(FinishReasons.TOOL_CALLS);
    }

    @Test
    void responsesItemsAreCorrelatedByOutputIndexWhenIdsRotate() {
        RecordedStreams.Played played = streams.play("vercel-responses-copilot-id-rotation.sse");

        assertThat(shape(played.payloads())).containsExactly(
                "item_start " + STEP + "-0 reasoning",
                "item_delta " + STEP + "-0 x1",
                "item_done " + STEP + "-0 reasoning",
                "item_start " + STEP + "-1 message",
                "item_delta " + STEP + "-1 x55",
                "item_done " + STEP + "-1 message");
        assertThat(finalContent(played.payloads(), STEP + "-1")).isEqualTo("There are **3** letter **“r”**s in "
                + "**“strawberry.”**\n\nBreakdown: **s t r a w b e r r y**  \nYou can see **r** at positions **3, 8, and 9**.");
    }

    @Test
    void responsesErrorEventFailsTheStepWithTheProvidersCode() {
        RecordedStreams.Played played = streams.play("vercel-responses-error-insufficient-quota.sse");

        assertThat(played.payloads()).isEmpty();
        assertThat(played.outcome().error().code()).isEqualTo("insufficient_quota");
        assertThat(played.outcome().error().message()).startsWith("You exceeded your current quota");
        assertThat(played.outcome().retryable()).isFalse();
    }

    @Test
    void responsesCustomToolInputIsCarriedAsRawArguments() {
        RecordedStreams.Played played = streams.play("vercel-responses-SYNTH-custom-tool.sse");

        List<StreamPayload> expected = new ArrayList<>();
        expected.add(startCall(0, "write_sql", "call_custom_sql_001"));
        expected.add(pending(0, "write_sql", "call_custom_sql_001"));
        expected.addAll(deltas(0, "SELECT * ", "FROM users ", "WHERE age > 25"));
        expected.add(doneCall(0, "write_sql", "SELECT * FROM users WHERE age > 25", "call_custom_sql_001", "openai"));
        assertThat(played.payloads()).containsExactlyElementsOf(expected);
    }

    // ---- streams cut short ----

    @ParameterizedTest
    @CsvSource({"anthropic-docs-basic.sse, 5", "openai-chat-text.sse, 4", "vercel-responses-reasoning-fc-part4.sse, 7"})
    void streamEndingBeforeItsTerminalEventFailsOpenItems(String fixture, int eventsKept) throws IOException {
        RecordedStreams.Played played = streams.play("cut-" + fixture, firstEvents(fixture, eventsKept),
                RecordedStreams.adapterFor(fixture), RecordedStreams.simpleRequest());

        assertThat(played.outcome().status()).isEqualTo(ResponseStatus.ERROR);
        assertThat(played.outcome().error().code()).isEqualTo(ErrorCodes.STREAM_TRUNCATED);
        assertThat(played.outcome().retryable()).isTrue();
        StreamPayload last = played.payloads().get(played.payloads().size() - 1);
        assertThat(last).isInstanceOf(StreamPayload.ItemError.class);
        assertEveryStartedItemIsClosedOnceAndNothingFollows(played.payloads());
    }

    @Test
    void anEventThatIsNotAnObjectIsBadInputAndNothingEscapes() {
        byte[] body = "event: message_start\ndata: [1, 2]\n\n".getBytes(StandardCharsets.UTF_8);

        assertThatCode(() -> {
            RecordedStreams.Played played = streams.play("array-data", body, new AnthropicMessagesAdapter(),
                    RecordedStreams.simpleRequest());
            assertThat(played.outcome().error().code()).isEqualTo(ErrorCodes.BAD_PROVIDER_DATA);
        }).doesNotThrowAnyException();
    }

    // ---- invariants ----



    private static void assertToolArgumentsParse(List<StreamPayload> payloads) {
        for (StreamPayload payload : payloads) {
            if (payload instanceof ItemDone done && done.finalItem().knownType() == ItemType.FUNCTION_CALL) {
                String arguments = done.finalItem().arguments().asText();
                assertThatCode(() -> Json.MAPPER.readTree(arguments)).doesNotThrowAnyException();
                assertThat(Json.parseOrText(arguments).isObject()).as("arguments %s", arguments).isTrue();
            }
        }
    }

    private static void assertToolCallsAreTheDoneFunctionCalls(RecordedStreams.Played played) {
        List<String> doneCalls = played.payloads().stream()
                .filter(p -> p instanceof ItemDone done && done.finalItem().knownType() == ItemType.FUNCTION_CALL)
                .map(p -> ((ItemDone) p).finalItem().callId())
                .toList();
        assertThat(played.outcome().toolCalls()).extracting(ToolCallRequest::callId).containsExactlyElementsOf(doneCalls);
    }

    /**
     * The oracle for usage: the last value of each field of every {@code usage} object in the
     * recording, mapped the way each provider documents its counts.
     */
    /** The prompt, completion and total counts only. */
    private static Usage tokens(Usage usage) {
        return usage == null ? null : new Usage(usage.promptTokens(), usage.completionTokens(), usage.totalTokens());
    }

    private static Usage lastReportedUsage(String fixture) {
        Map<String, Long> last = new HashMap<>();
        for (SseEvent event : events(RecordedStreams.bytes(fixture))) {
            if (event.data().startsWith("{")) {
                for (JsonNode usage : Json.fromString(event.data(), JsonNode.class).findValues("usage")) {
                    usage.fields().forEachRemaining(f -> {
                        if (f.getValue().isNumber()) {
                            last.put(f.getKey(), f.getValue().asLong());
                        }
                    });
                }
            }
        }
        if (last.containsKey("prompt_tokens")) {
            return new Usage(last.get("prompt_tokens"), last.get("completion_tokens"), last.get("total_tokens"));
        }
        if (last.containsKey("total_tokens")) {
            return new Usage(last.get("input_tokens"), last.get("output_tokens"), last.get("total_tokens"));
        }
        if (last.isEmpty()) {
            return null;
        }
        long prompt = last.getOrDefault("input_tokens", 0L) + last.getOrDefault("cache_creation_input_tokens", 0L)
                + last.getOrDefault("cache_read_input_tokens", 0L);
        long completion = last.getOrDefault("output_tokens", 0L);
        return new Usage(prompt, completion, prompt + completion);
    }

    // ---- helpers ----

    private static List<SseEvent> events(byte[] body) {
        List<SseEvent> events = new ArrayList<>();
        try {
            SseReader reader = new SseReader(new ByteArrayInputStream(body));
            for (SseEvent e = reader.next(); e != null; e = reader.next()) {
                events.add(e);
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return events;
    }

    private static byte[] firstEvents(String fixture, int count) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        events(RecordedStreams.bytes(fixture)).subList(0, count).forEach(e -> body.writeBytes(SseFormat.format(e)));
        return body.toByteArray();
    }



    private static String finalContent(List<StreamPayload> payloads, String itemId) {
        return payloads.stream().filter(p -> p instanceof ItemDone d && d.itemId().equals(itemId))
                .map(p -> ((ItemDone) p).finalItem().content()).findFirst().orElseThrow();
    }

    private static String id(int n) {
        return STEP + "-" + n;
    }

    private static StreamPayload start(int n, ItemType type) {
        return new ItemStart(id(n), type, null, null, null, null, type == ItemType.MESSAGE ? Origins.AGENT : null);
    }

    private static StreamPayload startCall(int n, String name, String callId) {
        return new ItemStart(id(n), ItemType.FUNCTION_CALL, null, name, null, callId, null);
    }

    /** A call's first status, emitted as soon as it streams. */
    private static StreamPayload pending(int n, String name, String callId) {
        return new StreamPayload.ToolStatus(id(n), callId, name, ToolState.PENDING, null, null, null);
    }

    private static StreamPayload delta(int n, String text) {
        return new ItemDelta(id(n), text);
    }

    private static List<StreamPayload> deltas(int n, String... texts) {
        return java.util.Arrays.stream(texts).map(t -> delta(n, t)).toList();
    }

    private static StreamPayload done(int n, ItemType type, String content, String provider) {
        String origin = type == ItemType.MESSAGE ? Origins.AGENT : null;
        return new ItemDone(id(n), new OutputItem(id(n), type, content, origin, null, null, null, null, null, provider));
    }

    private static StreamPayload doneCall(int n, String name, String arguments, String callId, String provider) {
        return new ItemDone(id(n), new OutputItem(id(n), ItemType.FUNCTION_CALL, null, null, name,
                TextNode.valueOf(arguments), callId, null, null, provider));
    }
}
