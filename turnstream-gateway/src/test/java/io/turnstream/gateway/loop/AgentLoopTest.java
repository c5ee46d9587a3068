package io.turnstream.gateway.loop;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.gateway.provider.ErrorCodes;
import io.turnstream.gateway.provider.FinishReasons;
import io.turnstream.gateway.provider.ModelCaller;
import io.turnstream.gateway.provider.ResolvedProvider;
import io.turnstream.gateway.provider.RetryPolicy;
import io.turnstream.gateway.provider.StepOutcome;
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.model.ControlMessage;
import io.turnstream.model.Json;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.TraceContext;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * The shell failing while it performs its machine's outputs: whichever output throws, those after it are not
 * performed, and the turn still ends with exactly one terminal event. Without a broker or real waits: the
 * publisher is a list that throws once at the event the test names.
 */
class AgentLoopTest {

    private static final String MODEL = "sim-large";
    private static final StreamPayload.Usage USED = new StreamPayload.Usage(10, 5, 15);

    private final TurnSimulationTest.SimClock clock = new TurnSimulationTest.SimClock();
    private final List<StreamPayload> events = new ArrayList<>();
    private final TurnRegistry registry = new TurnRegistry();

    @Test
    void aSendOfTheTurnsEndThatThrowsEndsItInternalWithWhatItUsed() {
        run(payload -> payload instanceof StreamPayload.ResponseDone);

        assertThat(events.stream().filter(AgentLoopTest::terminal)).as("exactly one terminal event").hasSize(1);
        assertThat(events).last().isInstanceOfSatisfying(StreamPayload.ResponseError.class, error -> {
            assertThat(error.error().code()).isEqualTo(ErrorCodes.INTERNAL);
            assertThat(error.usage()).isEqualTo(USED);
        });
        assertThat(registry.status("turn")).get().extracting(TurnStatus::status).isEqualTo(TurnPhase.ERROR);
    }

    @Test
    void aWriteThatThrowsBeforeTheTurnsEndEndsItInternal() {
        // the step's status, between its last item_done and its checkpoint: neither the checkpoint nor the end follow
        run(payload -> payload instanceof StreamPayload.TurnStatus);

        assertThat(events.stream().filter(AgentLoopTest::terminal)).as("exactly one terminal event").hasSize(1);
        assertThat(events).last().isInstanceOfSatisfying(StreamPayload.ResponseError.class,
                error -> assertThat(error.error().code()).isEqualTo(ErrorCodes.INTERNAL));
        assertThat(registry.status("turn")).get().extracting(TurnStatus::status).isEqualTo(TurnPhase.ERROR);
    }

    /** Runs a turn whose one step answers; the first send of an event that {@code throwsAt} picks throws. */
    private void run(Predicate<StreamPayload> throwsAt) {
        TurnRegistry.ActiveTurn active = registry.register(new TurnStatus("turn", "thread", "run", TurnPhase.RUNNING));
        LoopConfig config = new LoopConfig(1024, null, new RetryPolicy(1, Duration.ofSeconds(1), Duration.ofSeconds(30)),
                Duration.ofSeconds(60), PriceTable.from(Settings.of(new Properties())),
                CompactionConfig.from(Settings.of(new Properties())), LoopConfig.OnDeny.STOP);
        AgentLoop.Turn turn = new AgentLoop.Turn("turn", "thread", "run", new ResolvedProvider("sim", null, null, MODEL),
                null, "be brief", List.of(), "say hello", List.of(), 4, TraceContext.fresh(), null, Set.of());
        new AgentLoop(turn, TurnProgress.fresh(MODEL), active, registry, publisher(throwsAt), answers(),
                clock.idleWaits(), new GatewayMetrics(), config, new ThreadAllowances()).run();
    }

    private static ModelCaller answers() {
        return (adapter, endpoint, request, items, cancel) -> {
            items.startMessage("Hello").done(null);
            items.closeAll();
            return new StepOutcome(ResponseStatus.COMPLETE, FinishReasons.STOP, USED, items.toolCalls(),
                    Json.MAPPER.createArrayNode(), null, false, false, null, items.published());
        };
    }

    private TurnPublisher publisher(Predicate<StreamPayload> throwsAt) {
        return new TurnPublisher() {
            private boolean thrown;

            @Override
            public CompletableFuture<Void> rawEvent(String runId, TraceContext trace, StreamPayload payload) {
                if (!thrown && throwsAt.test(payload)) {
                    thrown = true;
                    throw new IllegalStateException("a bug in the shell's send");
                }
                events.add(payload);
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
            public java.time.Clock clock() {
                return clock;
            }
        };
    }


    private static boolean terminal(StreamPayload payload) {
        return payload instanceof StreamPayload.ResponseDone || payload instanceof StreamPayload.ResponseError;
    }
}
