package io.turnstream.gateway;

import static io.turnstream.gateway.TurnUpserts.end;
import static io.turnstream.gateway.TurnUpserts.indexOf;
import static io.turnstream.gateway.TurnUpserts.turnStatuses;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.gateway.loop.CompactionPrompts;
import io.turnstream.gateway.loop.GatewayMetrics;
import io.turnstream.gateway.provider.ErrorCodes;
import io.turnstream.gateway.sim.SimulatedAnthropicServer;
import io.turnstream.gateway.sim.SimulatedReply;
import io.turnstream.gateway.sim.SimulatedRequest;
import io.turnstream.model.ChangeType;
import io.turnstream.model.Json;
import io.turnstream.model.ToolResult;
import io.turnstream.model.Topics;
import io.turnstream.model.UIStatus;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiItemType;
import io.turnstream.model.UiPayloadType;
import io.turnstream.model.UpsertEnvelope;
import io.turnstream.runtime.UpsertLog;
import io.turnstream.testsupport.UsesBroker;
import io.turnstream.tools.PublishedTools;
import io.turnstream.tools.ToolRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Context management end to end: the simulated provider reports usage near a small context window
 * or refuses a prompt as too long, the gateway compacts the conversation with a summarisation call
 * and the turn goes on; the real topology turns it all into {@code llm.upserts}.
 */
@UsesBroker
class ContextCompactionTest {

    private static final Duration TURN_TIMEOUT = Duration.ofSeconds(60);
    private static final long WINDOW = 10_000;
    /** A listing long enough to dominate the conversation, and recognisable wherever it is sent. */
    private static final String LONG_LISTING = "listing-marker.txt\n" + "src/some/deeply/nested/file.txt\n".repeat(80);

    @TempDir
    static Path home;

    @RegisterExtension
    static final BrokerStack stack = new BrokerStack();
    private static Gateway gateway;
    private static RawEventsTap raw;
    private static UpsertLog upserts;
    /** Every request the provider received, per scenario (the prompt's first word). */
    private static final Map<String, List<SimulatedRequest>> requests = new ConcurrentHashMap<>();

    @BeforeAll
    static void startEverything() throws Exception {
        stack.broker(2);
        PublishedTools.publish(stack.bootstrapServers(), Topics.DEFAULTS, ToolRegistry.installed());
        stack.topology("context-compaction", home.resolve("state"));
        SimulatedAnthropicServer provider = stack.closing(
                SimulatedAnthropicServer.start(0, ContextCompactionTest::script, 0));
        Properties settings = stack.gatewaySettings();
        settings.put("turnstream.gateway.context-window.turnstream-simulated", String.valueOf(WINDOW));
        gateway = stack.gateway(settings, provider);
        raw = stack.closing(new RawEventsTap(stack.bootstrapServers(), Topics.DEFAULTS,
                ContextCompactionTest::runTool));
        upserts = stack.upserts();
    }

    /**
     * Every scenario lists the workspace, then reads its README, then answers; what the provider
     * reports or refuses on the way depends on the scenario. Summarisation requests get a summary.
     */
    private static SimulatedReply script(SimulatedRequest request) {
        String body = request.body().toString();
        String scenario = List.of("threshold:", "overflow-once:", "overflow-always:").stream()
                .filter(body::contains).findFirst().orElse("other");
        requests.computeIfAbsent(scenario, s -> new CopyOnWriteArrayList<>()).add(request);
        if (request.asksForSummary()) {
            return SimulatedReply.summaryOf(request);
        }
        boolean compacted = request.firstUserText().startsWith(CompactionPrompts.SUMMARY_INTRO);
        List<SimulatedRequest.ToolResultView> results = request.lastToolResults();
        String lastTool = results.isEmpty() ? null : results.get(0).toolName();
        if (lastTool == null && !compacted) {
            return SimulatedReply.answer().toolUse("list_files", Json.MAPPER.createObjectNode().put("path", "."))
                    .usage(1_000, null, null);
        }
        switch (scenario) {
            case "threshold:" -> {
                return "list_files".equals(lastTool)
                        ? SimulatedReply.answer().toolUse("read_file", Json.MAPPER.createObjectNode().put("path", "README.md"))
                                .usage(9_500, 8_000L, null)
                        : SimulatedReply.answer().text("The README says hello.");
            }
            case "overflow-once:" -> {
                return compacted ? SimulatedReply.answer().text("Answered from the summary.")
                        : SimulatedReply.promptTooLong(12_345, WINDOW);
            }
            default -> {
                return SimulatedReply.promptTooLong(12_345, WINDOW);
            }
        }
    }

    private static ToolResult runTool(RawEventsTap.Call call) {
        JsonNode output = TextNode.valueOf("list_files".equals(call.toolName()) ? LONG_LISTING : "# Hello\n");
        long now = System.currentTimeMillis();
        return new ToolResult(call.callId(), call.turnId(), call.toolName(), true, output, null, now, now);
    }

    @Test
    void aStepThatFillsTheWindowPastTheThresholdCompactsTheConversationAndTheTurnCompletes() throws Exception {
        String turnId = startTurn("threshold: what does the README say?");

        List<UpsertEnvelope> turn = upserts.awaitEnd(turnId, TURN_TIMEOUT);

        UITurnEvent end = end(turn);
        assertThat(end.type()).isEqualTo(UiPayloadType.TURN_COMPLETED);
        UIStatus compacting = turnStatus(turn, "compacting");
        assertThat(compacting.contextWindow()).isEqualTo(WINDOW);
        assertThat(compacting.contextTokens()).as("the second step's prompt and output").isGreaterThan(9_500);
        UIUpsert summary = compactionItem(turn);
        assertThat(summary.itemType()).isEqualTo(UiItemType.MESSAGE);
        assertThat(summary.changeType()).isEqualTo(ChangeType.COMPLETED);
        assertThat(summary.content()).startsWith("Summary of 3 earlier messages. The user asked: threshold:");
        assertThat(indexOf(turn, compacting)).isLessThan(indexOf(turn, summary));
        assertThat(indexOf(turn, summary)).isLessThan(indexOf(turn, turnStatus(turn, "running")));

        List<SimulatedRequest> sent = requests.get("threshold:");
        assertThat(sent).hasSize(4);
        SimulatedRequest summarisation = sent.get(2);
        assertThat(summarisation.asksForSummary()).isTrue();
        assertThat(summarisation.body().toString()).as("the older part is summarised").contains("listing-marker.txt")
                .as("the kept step is not").doesNotContain("\"path\":\"README.md\"");
        JsonNode next = sent.get(3).body().get("messages");
        assertThat(next).as("summary, then the kept step: its read_file call and result").hasSize(3);
        assertThat(sent.get(3).firstUserText()).isEqualTo(CompactionPrompts.summaryMessage(summary.content()));
        assertThat(next.get(1).toString()).contains("tool_use").contains("read_file");
        assertThat(next.get(2).toString()).contains("tool_result").contains("# Hello");
        assertThat(sent.get(3).body().toString()).as("the old messages are gone")
                .doesNotContain("listing-marker.txt").doesNotContain("list_files\",\"input");
        assertThat(gateway.metrics().get(GatewayMetrics.Counter.COMPACTIONS)).isPositive();
    }

    @Test
    void aPromptTooLongErrorCompactsOnceAndTheStepIsCalledAgain() throws Exception {
        String turnId = startTurn("overflow-once: what is here?");

        List<UpsertEnvelope> turn = upserts.awaitEnd(turnId, TURN_TIMEOUT);

        UITurnEvent end = end(turn);
        assertThat(end.type()).isEqualTo(UiPayloadType.TURN_COMPLETED);
        UIStatus compacting = turnStatus(turn, "compacting");
        assertThat(compacting.contextTokens()).as("as the provider reported it").isEqualTo(12_345);
        assertThat(compacting.contextWindow()).isEqualTo(WINDOW);
        assertThat(compactionItem(turn).content()).contains("The user asked: overflow-once:");
        assertThat(agentMessages(turn)).containsExactly("Answered from the summary.");
        List<SimulatedRequest> sent = requests.get("overflow-once:");
        assertThat(sent).extracting(SimulatedRequest::asksForSummary).containsExactly(false, false, true, false);
        assertThat(sent.get(3).messageCount()).as("everything was summarised").isEqualTo(1);
    }

    @Test
    void aPromptStillTooLongAfterCompactingFailsTheTurnWithAClearError() throws Exception {
        String turnId = startTurn("overflow-always: what is here?");

        List<UpsertEnvelope> turn = upserts.awaitEnd(turnId, TURN_TIMEOUT);

        UITurnEvent end = end(turn);
        assertThat(end.type()).isEqualTo(UiPayloadType.TURN_ERROR);
        assertThat(end.error().code()).isEqualTo(ErrorCodes.CONTEXT_OVERFLOW);
        assertThat(end.error().message()).isEqualTo("the conversation does not fit the context window of "
                + "turnstream-simulated (10000 tokens) even after compacting it: the provider answered HTTP 400: "
                + "prompt is too long: 12345 tokens > 10000 maximum");
        assertThat(requests.get("overflow-always:")).as("compacted once, not again")
                .filteredOn(SimulatedRequest::asksForSummary).hasSize(1);
        assertThat(compactionItem(turn)).isNotNull();
    }

    // ---- helpers ----

    private static UIStatus turnStatus(List<UpsertEnvelope> turn, String status) {
        return turnStatuses(turn).stream().filter(s -> status.equals(s.status())).findFirst()
                .orElseThrow(() -> new AssertionError("no " + status + " status in " + turn));
    }

    private static UIUpsert compactionItem(List<UpsertEnvelope> turn) {
        return turn.stream().map(UpsertEnvelope::payload)
                .filter(p -> p instanceof UIUpsert u && "compaction".equals(u.origin()))
                .map(p -> (UIUpsert) p).findFirst()
                .orElseThrow(() -> new AssertionError("no compaction item in " + turn));
    }

    private static List<String> agentMessages(List<UpsertEnvelope> turn) {
        return turn.stream().map(UpsertEnvelope::payload)
                .filter(p -> p instanceof UIUpsert u && u.itemType() == UiItemType.MESSAGE && "agent".equals(u.origin())
                        && u.changeType() == ChangeType.COMPLETED)
                .map(p -> ((UIUpsert) p).content()).toList();
    }

    private static String startTurn(String prompt) throws Exception {
        return GatewayHttp.startTurn(gateway, Json.MAPPER.createObjectNode().put("prompt", prompt));
    }
}
