package io.turnstream.gateway;

import static io.turnstream.gateway.TurnUpserts.end;
import static io.turnstream.gateway.TurnUpserts.toolOutput;
import static io.turnstream.gateway.TurnUpserts.toolOutputs;
import static io.turnstream.gateway.TurnUpserts.toolStatuses;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.gateway.provider.FinishReasons;
import io.turnstream.gateway.sim.SimulatedAnthropicServer;
import io.turnstream.gateway.sim.SimulatedReply;
import io.turnstream.gateway.sim.SimulatedRequest;
import io.turnstream.model.Json;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.Topics;
import io.turnstream.model.UIStatus;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UpsertEnvelope;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.UpsertLog;
import io.turnstream.testsupport.UsesBroker;
import io.turnstream.tools.Tool;
import io.turnstream.tools.ToolApprovals;
import io.turnstream.tools.ToolContext;
import io.turnstream.tools.ToolExecutorConfig;
import io.turnstream.tools.ToolRegistry;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tool calls that need a person's approval, as a UI sees them on {@code llm.upserts}: the real
 * topology and tool executor on an embedded broker, the gateway calling the simulated provider. The
 * {@code note} tool is on {@code ask}; every other tool keeps the default {@code allow}.
 */
@UsesBroker
class ToolApprovalsTest {

    private static final Duration TURN_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration APPROVAL_TIMEOUT = Duration.ofSeconds(10);
    private static final String LATE_TURN_REQUESTS = "late.turn-requests";

    @TempDir
    static Path home;

    @RegisterExtension
    static final BrokerStack stack = new BrokerStack();
    private static SimulatedAnthropicServer provider;
    private static Gateway gateway;
    private static UpsertLog upserts;
    /** How often the note tool ran, per note. */
    private static final Map<String, AtomicInteger> notesTaken = new ConcurrentHashMap<>();
    /** How often the model was called, per prompt. */
    private static final Map<String, AtomicInteger> modelCalls = new ConcurrentHashMap<>();

    @BeforeAll
    static void startEverything() throws Exception {
        stack.broker(2);
        Properties lateTopics = new Properties();
        lateTopics.put(Topics.PREFIX + "turn-requests", LATE_TURN_REQUESTS);
        stack.createTopics(Topics.from(lateTopics), 2);
        stack.topology("tool-approvals", home.resolve("state"));
        stack.executor(home.resolve("workspace"), ToolRegistry.installed().plus(new NoteTool()), Map.of(
                ToolApprovals.PREFIX + "note", "ask",
                ToolExecutorConfig.PREFIX + "approval-timeout-ms", String.valueOf(APPROVAL_TIMEOUT.toMillis())));
        provider = stack.closing(SimulatedAnthropicServer.start(0, ToolApprovalsTest::script, 0));
        gateway = stack.gateway(gatewaySettings(), provider);
        upserts = stack.upserts();
    }

    /**
     * {@code note: ...} takes the prompt as a note, then answers with the tool's output;
     * {@code repeat: ...} reads README.md three times in a row with the same arguments, then answers.
     */
    private static SimulatedReply script(SimulatedRequest request) {
        String prompt = request.firstUserText();
        modelCalls.computeIfAbsent(prompt, p -> new AtomicInteger()).incrementAndGet();
        if (prompt.startsWith("repeat:")) {
            long calls = StreamSupport.stream(request.body().get("messages").spliterator(), false)
                    .filter(message -> "assistant".equals(message.path("role").asText())).count();
            return calls < 3
                    ? SimulatedReply.answer().toolUse("read_file", args("path", "README.md"))
                    : SimulatedReply.answer().text("Read it three times.");
        }
        List<SimulatedRequest.ToolResultView> results = request.lastToolResults();
        if (!results.isEmpty()) {
            return SimulatedReply.answer().text("The tool said: " + results.get(0).content());
        }
        return SimulatedReply.answer().toolUse("note", args("text", prompt));
    }

    @Test
    void anAskCallWaitsForApprovalAndRunsOnceApproved() throws Exception {
        String turnId = startTurn("note: approve me");
        String callId = awaitAwaitingApproval(turnId);

        HttpResponse<String> response = decide(turnId, callId, "{\"approved\": true}");

        assertThat(response.statusCode()).as(response.body()).isEqualTo(202);
        assertThat(Json.fromString(response.body(), JsonNode.class).get("approved").asBoolean()).isTrue();
        List<UpsertEnvelope> turn = upserts.awaitEnd(turnId, TURN_TIMEOUT);
        // running shows when the executor's start notice reaches the gateway before the result does
        assertThat(toolStatuses(turn)).extracting(UIStatus::status)
                .containsSubsequence("pending", "awaiting_approval", "completed").doesNotContain("error")
                .last().isEqualTo("completed");
        assertThat(toolOutput(turn).success()).isTrue();
        assertThat(Json.asText(toolOutput(turn).toolOutput())).isEqualTo("noted: note: approve me");
        assertThat(notesTaken.get("note: approve me")).hasValue(1);
        assertThat(end(turn).status()).isEqualTo(ResponseStatus.COMPLETE);
    }

    @Test
    void aDeniedCallDoesNotRunAndItsOutputSaysSo() throws Exception {
        String turnId = startTurn("note: deny me");
        String callId = awaitAwaitingApproval(turnId);

        HttpResponse<String> response = decide(turnId, callId, "{\"approved\": false, \"reason\": \"not today\"}");

        assertThat(response.statusCode()).as(response.body()).isEqualTo(202);
        List<UpsertEnvelope> turn = upserts.awaitEnd(turnId, TURN_TIMEOUT);
        UIUpsert output = toolOutput(turn);
        assertThat(output.success()).isFalse();
        assertThat(Json.asText(output.toolOutput())).isEqualTo("Not executed: the call was denied: not today");
        List<UIStatus> statuses = toolStatuses(turn);
        assertThat(statuses).extracting(UIStatus::status).containsExactly("pending", "awaiting_approval", "error");
        assertThat(statuses.get(2).error().code()).isEqualTo("DENIED");
        assertThat(notesTaken).doesNotContainKey("note: deny me");
        assertThat(end(turn).status()).isEqualTo(ResponseStatus.COMPLETE);
        assertThat(end(turn).finishReason()).as("the denial ends the turn").isEqualTo(FinishReasons.TOOL_DENIED);
        assertThat(modelCalls.get("note: deny me")).as("the model is not called again after the denial").hasValue(1);
    }

    /**
     * A gateway started after the executor asked never read the ask on llm.control: it knows it from
     * the compacted llm.item-state (the call's tool status), takes the decision and the call runs.
     */
    @Test
    void anApprovalPostedToAGatewayStartedAfterTheAskRunsTheCall() throws Exception {
        String turnId = startTurn("note: approve me elsewhere");
        String callId = awaitAwaitingApproval(turnId);
        Properties settings = gatewaySettings();
        // a group and turn-requests topic of its own, so that it takes no turn over from the first gateway
        settings.put("turnstream.gateway.group-id", "late-gateway");
        settings.put(Topics.PREFIX + "turn-requests", LATE_TURN_REQUESTS);
        try (Gateway late = Gateway.start(Settings.of(settings), ProviderEndpoints.simulatedOnly(provider.baseUrl()),
                List.of())) {
            HttpResponse<String> response = GatewayHttp.post(late,
                    "/v1/turns/" + turnId + "/tool-calls/" + callId + "/approval", "{\"approved\": true}");

            assertThat(response.statusCode()).as(response.body()).isEqualTo(202);
            assertThat(Json.fromString(response.body(), JsonNode.class).get("approved").asBoolean()).isTrue();
            List<UpsertEnvelope> turn = upserts.awaitEnd(turnId, TURN_TIMEOUT);
            assertThat(toolOutput(turn).success()).isTrue();
            assertThat(notesTaken.get("note: approve me elsewhere")).hasValue(1);
        }
    }

    /**
     * {@code remember: true} allows the tool for the rest of the thread: a gateway started afterwards (which
     * never read the decision on llm.control) runs a later turn of that thread whose call of the tool the
     * executor asks about without anyone deciding; a turn of another thread still waits for a person.
     */
    @Test
    void rememberAllowsTheToolForTheRestOfTheThreadAcrossGateways() throws Exception {
        String thread = "remembering-" + System.nanoTime();
        String first = startTurn(gateway, "note: remember me", thread);
        String firstCall = awaitAwaitingApproval(first);

        HttpResponse<String> allowed = decide(first, firstCall, "{\"approved\": true, \"remember\": true}");

        assertThat(allowed.statusCode()).as(allowed.body()).isEqualTo(202);
        assertThat(toolOutput(upserts.awaitEnd(first, TURN_TIMEOUT)).success()).isTrue();
        Properties settings = gatewaySettings();
        settings.put("turnstream.gateway.group-id", "remembering-gateway");
        settings.put(Topics.PREFIX + "turn-requests", LATE_TURN_REQUESTS);
        try (Gateway late = Gateway.start(Settings.of(settings), ProviderEndpoints.simulatedOnly(provider.baseUrl()),
                List.of())) {
            String second = startTurn(late, "note: allowed already", thread);
            List<UpsertEnvelope> turn = upserts.awaitEnd(second, TURN_TIMEOUT);
            assertThat(toolStatuses(turn)).extracting(UIStatus::status)
                    .containsSubsequence("pending", "awaiting_approval", "completed").last().isEqualTo("completed");
            assertThat(notesTaken.get("note: allowed already")).as("ran without a person's decision").hasValue(1);

            String elsewhere = startTurn(late, "note: another thread", thread + "-other");
            String otherCall = awaitAwaitingApproval(elsewhere);
            assertThat(GatewayHttp.post(late, "/v1/turns/" + elsewhere + "/tool-calls/" + otherCall + "/approval",
                    "{\"approved\": false, \"reason\": \"not here\"}").statusCode()).isEqualTo(202);
            assertThat(toolOutput(upserts.awaitEnd(elsewhere, TURN_TIMEOUT)).success())
                    .as("the allowance is of its thread only").isFalse();
        }
        assertThat(decide(first, firstCall, "{\"approved\": false, \"remember\": true}").statusCode())
                .as("remember goes with an approval only").isEqualTo(400);
    }

    @Test
    void theFirstDecisionStandsAndRepeatingItRunsNothingTwice() throws Exception {
        String turnId = startTurn("note: decide me twice");
        String callId = awaitAwaitingApproval(turnId);

        HttpResponse<String> first = decide(turnId, callId, "{\"approved\": true}");
        HttpResponse<String> again = decide(turnId, callId, "{\"approved\": true}");
        HttpResponse<String> contrary = decide(turnId, callId, "{\"approved\": false, \"reason\": \"changed my mind\"}");

        assertThat(List.of(first, again, contrary)).extracting(HttpResponse::statusCode).containsOnly(202);
        assertThat(again.body()).isEqualTo(first.body());
        assertThat(contrary.body()).as("the first decision stands").isEqualTo(first.body());
        List<UpsertEnvelope> turn = upserts.awaitEnd(turnId, TURN_TIMEOUT);
        assertThat(toolOutput(turn).success()).isTrue();
        assertThat(notesTaken.get("note: decide me twice")).hasValue(1);
    }

    @Test
    void withoutADecisionInTimeTheCallIsDenied() throws Exception {
        String turnId = startTurn("note: nobody answers");
        String callId = awaitAwaitingApproval(turnId);

        List<UpsertEnvelope> turn = upserts.awaitEnd(turnId, TURN_TIMEOUT);

        UIUpsert output = toolOutput(turn);
        assertThat(output.success()).isFalse();
        assertThat(Json.asText(output.toolOutput())).isEqualTo("Not executed: the call was denied: no approval within "
                + APPROVAL_TIMEOUT.toSeconds() + " s");
        assertThat(notesTaken).doesNotContainKey("note: nobody answers");
        HttpResponse<String> late = decide(turnId, callId, "{\"approved\": true}");
        assertThat(late.statusCode()).isEqualTo(202);
        assertThat(Json.fromString(late.body(), JsonNode.class).get("approved").asBoolean())
                .as("the expiry is the decision that stands").isFalse();
    }

    @Test
    void theThirdIdenticalCallAsksInsteadOfBeingRefused() throws Exception {
        String turnId = startTurn("repeat: read it again");
        await().atMost(TURN_TIMEOUT).until(() -> toolStatuses(upserts.turn(turnId)).stream()
                .anyMatch(s -> "awaiting_approval".equals(s.status())));
        List<UIStatus> asked = toolStatuses(upserts.turn(turnId)).stream()
                .filter(s -> "awaiting_approval".equals(s.status())).toList();
        assertThat(asked).hasSize(1);
        assertThat(asked.get(0).toolName()).isEqualTo("read_file");

        decide(turnId, asked.get(0).callId(), "{\"approved\": true}");

        List<UpsertEnvelope> turn = upserts.awaitEnd(turnId, TURN_TIMEOUT);
        List<UIUpsert> outputs = toolOutputs(turn);
        assertThat(outputs).hasSize(3).allMatch(UIUpsert::success);
        assertThat(Json.asText(outputs.get(2).toolOutput())).contains("# Demo workspace");
    }

    @Test
    void aDecisionOnACallThatDoesNotWaitIsNotFoundAndABadBodyIsRefused() throws Exception {
        String turnId = startTurn("note: check the route");
        String callId = awaitAwaitingApproval(turnId);

        HttpResponse<String> unknownCall = post("/v1/turns/" + turnId + "/tool-calls/toolu_no_such_call/approval",
                "{\"approved\": true}");
        HttpResponse<String> notJson = decide(turnId, callId, "approve");
        HttpResponse<String> noDecision = decide(turnId, callId, "{\"approved\": \"yes\"}");
        HttpResponse<String> badReason = decide(turnId, callId, "{\"approved\": true, \"reason\": 42}");

        assertThat(unknownCall.statusCode()).isEqualTo(404);
        assertThat(unknownCall.body()).contains("no tool call toolu_no_such_call of turn " + turnId + " is awaiting approval");
        assertThat(notJson.statusCode()).isEqualTo(400);
        assertThat(notJson.body()).contains("not valid JSON");
        assertThat(List.of(noDecision, badReason)).allSatisfy(response -> {
            assertThat(response.statusCode()).isEqualTo(400);
            assertThat(response.body()).contains("{\\\"approved\\\": true|false");
        });
        assertThat(decide(turnId, callId, "{\"approved\": true}").statusCode()).as("still undecided").isEqualTo(202);
        assertThat(toolOutput(upserts.awaitEnd(turnId, TURN_TIMEOUT)).success()).isTrue();
    }

    // ---- helpers ----

    private static Properties gatewaySettings() {
        Properties settings = stack.gatewaySettings();
        settings.put("turnstream.gateway.unknown-turn-grace-ms", "500");
        return settings;
    }

    private static String awaitAwaitingApproval(String turnId) {
        return await().atMost(TURN_TIMEOUT).until(() -> toolStatuses(upserts.turn(turnId)).stream()
                        .filter(s -> "awaiting_approval".equals(s.status())).map(UIStatus::callId).findFirst().orElse(null),
                callId -> callId != null);
    }

    /**
     * Posts a decision on a call the test saw awaiting approval on {@code llm.upserts}, again while it is not found:
     * the gateway learns of the ask on {@code llm.control}, which it may read later than the topology's upsert came
     * (under load, longer than the short unknown-turn grace that keeps the unknown call's 404 quick). A 404 publishes
     * nothing, so the request is safe to send again.
     */
    private static HttpResponse<String> decide(String turnId, String callId, String body) {
        return await().atMost(TURN_TIMEOUT).until(() -> post("/v1/turns/" + turnId + "/tool-calls/" + callId
                + "/approval", body), response -> response.statusCode() != 404);
    }

    private static JsonNode args(String name, String value) {
        return JsonNodeFactory.instance.objectNode().put(name, value);
    }

    private static String startTurn(String prompt) throws Exception {
        return startTurn(gateway, prompt, null);
    }

    private static String startTurn(Gateway on, String prompt, String threadId) throws Exception {
        var body = JsonNodeFactory.instance.objectNode().put("prompt", prompt);
        if (threadId != null) {
            body.put("threadId", threadId);
        }
        return GatewayHttp.startTurn(on, body);
    }

    private static HttpResponse<String> post(String path, String body) throws Exception {
        return GatewayHttp.post(gateway, path, body);
    }

    /** Takes a note: counts how often each note was taken, so a test can tell whether a call ran. */
    private static final class NoteTool implements Tool {
        @Override
        public String name() {
            return "note";
        }

        @Override
        public String description() {
            return "takes a note";
        }

        @Override
        public JsonNode inputSchema() {
            return Json.fromString("{\"type\": \"object\", \"properties\": {\"text\": {\"type\": \"string\"}}, "
                    + "\"required\": [\"text\"]}", JsonNode.class);
        }

        @Override
        public boolean concurrencySafe() {
            return false;
        }

        @Override
        public JsonNode execute(JsonNode arguments, ToolContext context) {
            String text = arguments.get("text").asText();
            notesTaken.computeIfAbsent(text, t -> new AtomicInteger()).incrementAndGet();
            return TextNode.valueOf("noted: " + text);
        }
    }
}
