package io.turnstream.gateway.loop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.gateway.provider.ErrorCodes;
import io.turnstream.gateway.provider.FinishReasons;
import io.turnstream.gateway.provider.ModelCaller;
import io.turnstream.gateway.provider.ResolvedProvider;
import io.turnstream.gateway.provider.RetryPolicy;
import io.turnstream.gateway.provider.StepItems;
import io.turnstream.gateway.provider.StepOutcome;
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.model.ChangeType;
import io.turnstream.model.ControlMessage;
import io.turnstream.model.ItemType;
import io.turnstream.model.Json;
import io.turnstream.model.Origins;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.ToolCall;
import io.turnstream.model.ToolResult;
import io.turnstream.model.ToolState;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UiItemType;
import io.turnstream.model.UpsertEnvelope;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.TraceContext;
import io.turnstream.testkit.TurnstreamTestDriver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * The shell failing while it performs its machine's outputs: whichever output throws, those after it are not
 * performed, and the turn still ends with exactly one terminal event; what its items were left showing is closed by
 * the topology at that end; an end that cannot be written refuses the transaction. And it counts only the events the
 * broker has. Without a broker or real waits: the publisher is a list that throws (or fails) at the events the test
 * names; what it holds is run through the real topology where the test says what a reader sees.
 */
class AgentLoopTest {

    private static final String MODEL = "sim-large";
    private static final StreamPayload.Usage USED = new StreamPayload.Usage(10, 5, 15);

    private final TurnSimulationTest.SimClock clock = new TurnSimulationTest.SimClock();
    private final List<StreamPayload> events = new ArrayList<>();
    private final TurnRegistry registry = new TurnRegistry();
    private final GatewayMetrics metrics = new GatewayMetrics();
    /** Why the publisher was told its transaction must not commit, each time. */
    private final List<Throwable> transactionsFailed = new ArrayList<>();
    private TurnRegistry.ActiveTurn active;

    @Test
    void aSendOfTheTurnsEndThatThrowsEndsItInternalWithWhatItUsed() {
        run(answers(), throwing(1, payload -> payload instanceof StreamPayload.ResponseDone), payload -> false);

        assertThat(events.stream().filter(AgentLoopTest::terminal)).as("exactly one terminal event").hasSize(1);
        assertThat(events).last().isInstanceOfSatisfying(StreamPayload.ResponseError.class, error -> {
            assertThat(error.error().code()).isEqualTo(ErrorCodes.INTERNAL);
            assertThat(error.usage()).isEqualTo(USED);
        });
        assertThat(registry.status("turn")).get().extracting(TurnStatus::status).isEqualTo(TurnPhase.ERROR);
        assertThat(transactionsFailed).isEmpty();
    }

    @Test
    void aWriteThatThrowsBeforeTheTurnsEndEndsItInternal() {
        // the step's status, between its last item_done and its checkpoint: neither the checkpoint nor the end follow
        run(answers(), throwing(1, payload -> payload instanceof StreamPayload.TurnStatus), payload -> false);

        assertThat(events.stream().filter(AgentLoopTest::terminal)).as("exactly one terminal event").hasSize(1);
        assertThat(events).last().isInstanceOfSatisfying(StreamPayload.ResponseError.class,
                error -> assertThat(error.error().code()).isEqualTo(ErrorCodes.INTERNAL));
        assertThat(registry.status("turn")).get().extracting(TurnStatus::status).isEqualTo(TurnPhase.ERROR);
    }

    @Test
    void aSendThatThrowsIsNotCountedAsPublished() {
        run(answers(), throwing(1, payload -> payload instanceof StreamPayload.TurnStatus), payload -> false);

        assertThat(metrics.get(GatewayMetrics.Counter.EVENTS_PUBLISHED)).as("the events the broker has")
                .isEqualTo(events.size());
    }

    @Test
    void aSendThatFailsIsNotCountedAsPublished() {
        run(answers(), throwing(0, payload -> false), payload -> payload instanceof StreamPayload.ItemStart start
                && !start.itemId().endsWith("-user-prompt"));

        assertThat(metrics.get(GatewayMetrics.Counter.PUBLISH_FAILURES)).isEqualTo(1);
        assertThat(metrics.get(GatewayMetrics.Counter.EVENTS_PUBLISHED)).as("the events the broker has")
                .isEqualTo(events.size());
    }

    @Test
    void aMessagesItemDoneThatThrowsLeavesItOpenAndTheTopologyCompletesItWithItsTextAtTheInternalEnd() {
        run(answers(), throwing(1, payload -> payload instanceof StreamPayload.ItemDone done
                && Origins.AGENT.equals(done.finalItem().origin())), payload -> false);

        String message = "run-s1-0";
        assertThat(events).noneMatch(payload -> payload instanceof StreamPayload.ItemDone done
                && done.itemId().equals(message));
        TopologyRun topology = TopologyRun.of(events);
        assertThat(topology.end().error().code()).isEqualTo(ErrorCodes.INTERNAL);
        assertThat(topology.lastUpsertOf(message)).satisfies(last -> {
            assertThat(last.changeType()).isEqualTo(ChangeType.COMPLETED);
            assertThat(last.content()).isEqualTo("Hello");
        });
        assertThat(topology.itemsLeftOpen()).as("no item a UI would show streaming").isEmpty();
    }

    @Test
    void aReleaseThatThrowsNeverReachesTheExecutorItsCallIsAnsweredAndTheTopologyClosesIt() {
        run(callsATool(), throwing(1, payload -> payload instanceof StreamPayload.ItemDone done
                && done.finalItem().knownType() == ItemType.FUNCTION_CALL), payload -> false);

        String call = "run-s1-0";
        TopologyRun topology = TopologyRun.of(events);
        assertThat(topology.end().error().code()).isEqualTo(ErrorCodes.INTERNAL);
        assertThat(topology.toolCalls()).as("a call whose release was not sent never runs").isEmpty();
        assertThat(topology.lastUpsertOf(call).changeType()).isEqualTo(ChangeType.COMPLETED);
        assertThat(topology.upserts()).anySatisfy(upsert -> {
            assertThat(upsert.callId()).isEqualTo("call-1");
            assertThat(upsert.itemType()).isEqualTo(UiItemType.TOOL_OUTPUT);
            assertThat(upsert.success()).isFalse();
        });
        assertThat(topology.itemsLeftOpen()).as("no item a UI would show streaming").isEmpty();
    }

    @Test
    void aCallsOutputWhoseItemDoneThrowsEndsTheCallInErrorNotRunning() {
        run(callsATool(), throwing(1, payload -> payload instanceof StreamPayload.ItemDone done
                && done.finalItem().knownType() == ItemType.FUNCTION_CALL_OUTPUT), payload -> false);

        assertThat(events).filteredOn(StreamPayload.ToolStatus.class::isInstance).map(StreamPayload.ToolStatus.class::cast)
                .extracting(StreamPayload.ToolStatus::callId, StreamPayload.ToolStatus::status)
                .containsExactly(tuple("call-1", ToolState.PENDING), tuple("call-1", ToolState.RUNNING),
                        tuple("call-1", ToolState.ERROR));
        assertThat(events).filteredOn(StreamPayload.ToolStatus.class::isInstance).last()
                .isInstanceOfSatisfying(StreamPayload.ToolStatus.class, status -> {
                    assertThat(status.error().code()).isEqualTo(ErrorCodes.INTERNAL);
                    assertThat(status.completedAt()).isNotNull();
                });
        assertThat(events.stream().filter(AgentLoopTest::terminal)).as("exactly one terminal event").hasSize(1);
        assertThat(events).last().isInstanceOfSatisfying(StreamPayload.ResponseError.class,
                error -> assertThat(error.error().code()).isEqualTo(ErrorCodes.INTERNAL));
    }

    @Test
    void anInternalEndThatCannotBeWrittenEitherRefusesTheTransactionAndHandsTheTurnOn() {
        run(answers(), throwing(2, AgentLoopTest::terminal), payload -> false);

        assertThat(events).noneMatch(AgentLoopTest::terminal);
        assertThat(transactionsFailed).as("the open transaction is refused: it lacks the turn's end").hasSize(1);
        assertThat(active.handover).as("the turn goes on at the partition's next owner").isDone();
        assertThat(registry.status("turn")).as("not finished here").isEmpty();
        assertThat(registry.runningCount()).isZero();
    }

    /** Runs a turn; a send of an event that {@code throwsAt} picks throws, one that {@code failsAt} picks fails. */
    private void run(ModelCaller model, Predicate<StreamPayload> throwsAt, Predicate<StreamPayload> failsAt) {
        active = registry.register(new TurnStatus("turn", "thread", "run", TurnPhase.RUNNING));
        LoopConfig config = new LoopConfig(1024, null, new RetryPolicy(1, Duration.ofSeconds(1), Duration.ofSeconds(30)),
                Duration.ofSeconds(60), PriceTable.from(Settings.of(new Properties())),
                CompactionConfig.from(Settings.of(new Properties())), LoopConfig.OnDeny.STOP);
        AgentLoop.Turn turn = new AgentLoop.Turn("turn", "thread", "run", new ResolvedProvider("sim", null, null, MODEL),
                null, "be brief", List.of(), "say hello", List.of(), 4, TraceContext.fresh(), null, Set.of());
        new AgentLoop(turn, TurnProgress.fresh(MODEL), active, registry, publisher(throwsAt, failsAt), model,
                clock.idleWaits(), metrics, config, new ThreadAllowances()).run();
    }

    /** Picks the first {@code times} events that {@code which} picks. */
    private static Predicate<StreamPayload> throwing(int times, Predicate<StreamPayload> which) {
        int[] left = {times};
        return payload -> left[0] > 0 && which.test(payload) && left[0]-- > 0;
    }

    private static ModelCaller answers() {
        return (adapter, endpoint, request, items, cancel) -> {
            items.startMessage("Hello").done(null);
            items.closeAll();
            return new StepOutcome(ResponseStatus.COMPLETE, FinishReasons.STOP, USED, items.toolCalls(),
                    Json.MAPPER.createArrayNode(), null, false, false, null, items.published());
        };
    }

    /** The step calls read_file (run by the tool executor). */
    private static ModelCaller callsATool() {
        return (adapter, endpoint, request, items, cancel) -> {
            StepItems.Item call = items.startFunctionCall("read_file", "call-1");
            call.appendArguments("{\"path\":\"a.txt\"}");
            call.done(null);
            items.closeAll();
            return new StepOutcome(ResponseStatus.COMPLETE, FinishReasons.TOOL_CALLS, USED, items.toolCalls(),
                    Json.MAPPER.createArrayNode(), null, false, false, null, items.published());
        };
    }

    private TurnPublisher publisher(Predicate<StreamPayload> throwsAt, Predicate<StreamPayload> failsAt) {
        return new TurnPublisher() {
            @Override
            public CompletableFuture<Void> rawEvent(String runId, TraceContext trace, StreamPayload payload) {
                if (throwsAt.test(payload)) {
                    throw new IllegalStateException("a bug in the shell's send");
                }
                if (failsAt.test(payload)) {
                    return CompletableFuture.failedFuture(new IllegalStateException("the broker refused it"));
                }
                events.add(payload);
                executorSees(payload);
                return CompletableFuture.completedFuture(null);
            }

            @Override
            public CompletableFuture<Void> stepDone(int step, JsonNode checkpoint) {
                return CompletableFuture.completedFuture(null);
            }

            @Override
            public CompletableFuture<Void> control(ControlMessage message) {
                return CompletableFuture.completedFuture(null);
            }

            @Override
            public void failTransaction(Throwable why) {
                transactionsFailed.add(why);
            }

            @Override
            public java.time.Clock clock() {
                return clock;
            }
        };
    }

    /** The tool executor: starts a released call at once, and answers it once the gateway shows it running. */
    private void executorSees(StreamPayload payload) {
        if (payload instanceof StreamPayload.ItemDone done && done.finalItem().knownType() == ItemType.FUNCTION_CALL) {
            registry.toolStarted("turn", done.finalItem().callId(), clock.millis());
        } else if (payload instanceof StreamPayload.ToolStatus status && status.status() == ToolState.RUNNING) {
            registry.deliver("turn", new ToolResult(status.callId(), "turn", status.toolName(), true,
                    TextNode.valueOf("the file's text"), null, status.startedAt(), clock.millis()));
        }
    }

    private static boolean terminal(StreamPayload payload) {
        return payload instanceof StreamPayload.ResponseDone || payload instanceof StreamPayload.ResponseError;
    }

    /** What the real topology makes of a turn's raw events: its upserts, its end, the calls it sends to the executor. */
    private record TopologyRun(List<UIUpsert> upserts, UITurnEvent end, List<ToolCall> toolCalls) {

        static TopologyRun of(List<StreamPayload> events) {
            try (TurnstreamTestDriver driver = TurnstreamTestDriver.create()) {
                driver.send(events.stream().map(payload -> StreamEvent.of(UUID.randomUUID().toString(), 1_000_000,
                        "run", payload)).toList());
                List<UpsertEnvelope> envelopes = driver.upserts();
                return new TopologyRun(envelopes.stream().map(UpsertEnvelope::payload)
                        .filter(UIUpsert.class::isInstance).map(UIUpsert.class::cast).toList(),
                        (UITurnEvent) envelopes.get(envelopes.size() - 1).payload(), driver.toolCalls());
            }
        }

        UIUpsert lastUpsertOf(String itemId) {
            UIUpsert last = null;
            for (UIUpsert upsert : upserts) {
                if (upsert.itemId().equals(itemId)) {
                    last = upsert;
                }
            }
            assertThat(last).as("an upsert of %s", itemId).isNotNull();
            return last;
        }

        /** Items whose last upsert is neither completed nor withdrawn. */
        Set<String> itemsLeftOpen() {
            Map<String, ChangeType> last = new LinkedHashMap<>();
            upserts.forEach(upsert -> last.put(upsert.itemId(), upsert.changeType()));
            Set<String> open = new java.util.TreeSet<>();
            last.forEach((item, change) -> {
                if (change != ChangeType.COMPLETED && change != ChangeType.WITHDRAWN) {
                    open.add(item);
                }
            });
            return open;
        }
    }
}
