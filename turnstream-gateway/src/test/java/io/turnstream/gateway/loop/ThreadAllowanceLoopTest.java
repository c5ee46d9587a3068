package io.turnstream.gateway.loop;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.gateway.provider.FinishReasons;
import io.turnstream.gateway.provider.ModelCaller;
import io.turnstream.gateway.provider.ResolvedProvider;
import io.turnstream.gateway.provider.RetryPolicy;
import io.turnstream.gateway.provider.StepItems;
import io.turnstream.gateway.provider.StepOutcome;
import io.turnstream.gateway.provider.ToolDefinition;
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.model.ControlMessage;
import io.turnstream.model.Json;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.ToolResult;
import io.turnstream.model.ToolState;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.TraceContext;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * A tool allowed for the rest of its thread ({@code remember: true} on an earlier approval) has its later
 * asks approved by the turn's loop itself, in that thread only; without a broker or real waits: the
 * executor is simulated by the publisher (it asks when a call is released, runs it when approved).
 */
class ThreadAllowanceLoopTest {

    private static final String MODEL = "sim-large";

    private final TurnSimulationTest.SimClock clock = new TurnSimulationTest.SimClock();
    private final List<StreamPayload> events = new ArrayList<>();
    private final List<ControlMessage> decisions = new ArrayList<>();
    private final ThreadAllowances allowances = new ThreadAllowances();
    private TurnRegistry.ActiveTurn active;
    private int modelCalls;

    @Test
    void anAskForAToolAllowedInTheThreadIsApprovedByTheLoopAndTheCallRuns() {
        allowances.apply(ThreadAllowances.key("tenant-a", "thread-a", "write_file"), true);

        StreamPayload.ResponseDone done = (StreamPayload.ResponseDone) run("tenant-a", "thread-a");

        assertThat(decisions).singleElement().satisfies(decision -> {
            assertThat(decision.type()).isEqualTo(ControlMessage.Type.APPROVAL);
            assertThat(decision.approved()).isTrue();
            assertThat(decision.reason()).isEqualTo(ThreadAllowances.REASON);
            assertThat(decision.turnId()).isEqualTo("turn");
        });
        assertThat(toolStatuses()).containsExactly(ToolState.PENDING, ToolState.AWAITING_APPROVAL, ToolState.RUNNING,
                ToolState.COMPLETED);
        assertThat(done.status()).isEqualTo(ResponseStatus.COMPLETE);
        assertThat(done.finishReason()).isEqualTo(FinishReasons.STOP);
    }

    @Test
    void theAllowanceHoldsInItsThreadOnlyAndATombstoneTakesItBack() {
        allowances.apply(ThreadAllowances.key("tenant-a", "thread-a", "write_file"), true);
        allowances.apply(ThreadAllowances.key("tenant-a", "thread-b", "write_file"), true);
        allowances.apply(ThreadAllowances.key("tenant-a", "thread-b", "write_file"), false);

        assertThat(allowances.allows("tenant-b", "thread-a", "write_file")).as("another tenant's thread").isFalse();
        assertThat(allowances.allows("tenant-a", "thread-a", "edit_file")).as("another tool").isFalse();
        StreamPayload terminal = run("tenant-a", "thread-b");

        assertThat(decisions).as("nobody approved the call: it waits until the tool result timeout").isEmpty();
        assertThat(terminal).isInstanceOf(StreamPayload.ResponseError.class);
        assertThat(toolStatuses()).containsExactly(ToolState.PENDING, ToolState.AWAITING_APPROVAL, ToolState.ERROR);
    }

    /** Runs a turn whose first step calls {@code write_file} and whose second answers; returns its terminal event. */
    private StreamPayload run(String tenantId, String threadId) {
        TurnRegistry registry = new TurnRegistry();
        active = registry.register(new TurnStatus("turn", threadId, "run", TurnPhase.RUNNING));
        LoopConfig config = new LoopConfig(1024, null, new RetryPolicy(1, Duration.ofSeconds(1), Duration.ofSeconds(30)),
                Duration.ofSeconds(60), PriceTable.from(Settings.of(new Properties())),
                CompactionConfig.from(Settings.of(new Properties())), LoopConfig.OnDeny.STOP);
        AgentLoop.Turn turn = new AgentLoop.Turn("turn", threadId, "run", new ResolvedProvider("sim", null, null, MODEL),
                null, "be brief", List.of(), "write it", List.of(new ToolDefinition("write_file", "writes",
                Json.MAPPER.createObjectNode())), 4, TraceContext.fresh(), tenantId, Set.of());
        new AgentLoop(turn, TurnProgress.fresh(MODEL), active, registry, executor(), model(), clock.idleWaits(),
                new GatewayMetrics(), config, allowances).run();
        return events.get(events.size() - 1);
    }

    /** Step 1 calls write_file, step 2 answers. */
    private ModelCaller model() {
        return (adapter, endpoint, request, items, cancel) -> {
            boolean first = ++modelCalls == 1;
            if (first) {
                StepItems.Item call = items.startFunctionCall("write_file", "call-1");
                call.appendArguments("{\"path\":\"a.txt\"}");
                call.done(null);
            } else {
                StepItems.Item text = items.startMessage("Written.");
                text.done(null);
            }
            items.closeAll();
            return new StepOutcome(ResponseStatus.COMPLETE, first ? FinishReasons.TOOL_CALLS : FinishReasons.STOP,
                    null, items.toolCalls(), Json.MAPPER.createArrayNode(), null, false, false, null, items.published());
        };
    }

    /** The raw-event log and a tool executor whose policy for write_file is ask. */
    private TurnPublisher executor() {
        return new TurnPublisher() {
            @Override
            public CompletableFuture<Void> rawEvent(String runId, TraceContext trace, StreamPayload payload) {
                events.add(payload);
                if (payload instanceof StreamPayload.ItemDone done && done.finalItem().callId() != null
                        && done.finalItem().output() == null) {
                    active.awaitingApproval(done.finalItem().callId()).complete(null);
                }
                return CompletableFuture.completedFuture(null);
            }

            @Override
            public CompletableFuture<Void> stepDone(int step, JsonNode checkpoint) {
                return CompletableFuture.completedFuture(null);
            }

            @Override
            public void failTransaction(Throwable why) {
                throw new AssertionError("every end is written here", why);
            }

            @Override
            public CompletableFuture<Void> control(ControlMessage message) {
                decisions.add(message);
                active.started(message.callId()).complete(clock.millis());
                active.result(message.callId()).complete(new ToolResult(message.callId(), "turn", "write_file", true,
                        TextNode.valueOf("wrote a.txt"), null, clock.millis(), clock.millis()));
                return CompletableFuture.completedFuture(null);
            }

            @Override
            public java.time.Clock clock() {
                return clock;
            }
        };
    }


    private List<ToolState> toolStatuses() {
        return events.stream().filter(StreamPayload.ToolStatus.class::isInstance)
                .map(event -> ((StreamPayload.ToolStatus) event).status()).toList();
    }
}
