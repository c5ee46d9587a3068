package io.turnstream.gateway.ownership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.gateway.loop.TurnProgress;
import io.turnstream.gateway.loop.TurnRegistry;
import io.turnstream.gateway.provider.StepOutcome;
import io.turnstream.gateway.provider.ToolCallRequest;
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.model.ControlMessage;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.Json;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.ToolResult;
import io.turnstream.model.Topics;
import io.turnstream.model.TurnRequestRecord;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What a gateway taking a turn over reads of it, without a broker: the run's raw events, a cancel of the turn,
 * and its tool results only when it waits for some, from a minute before the turn was accepted.
 */
class TurnResumerTest {

    private static final Topics TOPICS = Topics.DEFAULTS;
    private static final long REQUESTED_AT = 5_000_000;
    private static final TurnRequestRecord REQUEST = TurnRequestRecord.request("turn-1", "thread-1", "run-1", null,
            REQUESTED_AT, Json.MAPPER.createObjectNode().put("prompt", "hi"));
    private static final ToolCallRequest CALL = new ToolCallRequest("run-1-s1-1", "call-1", "read_file", "{}");

    private final TurnRegistry.ActiveTurn active = new TurnRegistry().register(
            new TurnStatus("turn-1", "thread-1", "run-1", TurnPhase.RUNNING));
    private final Log log = new Log();
    private final List<TurnRequestRecord> steps = new ArrayList<>();

    @Test
    void aTurnWaitingForToolsGetsTheResultsThatArrivedMeanwhile() {
        started();
        steps.add(REQUEST.stepDone(1, TurnProgress.checkpoint("m", null, null, new StepOutcome(ResponseStatus.COMPLETE,
                "tool_calls", null, List.of(CALL), Json.MAPPER.createArrayNode(), null, false, false, null, 2), false, null)));
        ToolResult result = new ToolResult("call-1", "turn-1", "read_file", true, TextNode.valueOf("text"), null, 1, 2);
        log.results.add(result);

        TurnProgress progress = resume();

        assertThat(progress.awaiting().calls()).containsExactly(CALL);
        assertThat(active.result("call-1")).isCompletedWithValue(result);
        assertThat(log.since).as("read from a minute before the turn was accepted (clocks differ)")
                .containsOnly(Instant.ofEpochMilli(REQUESTED_AT - 60_000));
    }

    @Test
    void aTurnNotWaitingForToolsReadsNoResults() {
        started();

        TurnProgress progress = resume();

        assertThat(progress.started()).isTrue();
        assertThat(progress.awaiting()).isNull();
        assertThat(log.topicsRead).containsExactly(TOPICS.rawEvents(), TOPICS.control());
    }

    @Test
    void aTurnThatEndedReadsNoResultsAndIsNotResumed() {
        started();
        steps.add(REQUEST.stepDone(1, TurnProgress.checkpoint("m", null, null, new StepOutcome(ResponseStatus.COMPLETE,
                "tool_calls", null, List.of(CALL), Json.MAPPER.createArrayNode(), null, false, false, null, 2), false, null)));
        event(new StreamPayload.ResponseDone("run-1", ResponseStatus.ABORTED, null, null));

        TurnProgress progress = resume();

        assertThat(progress.endedStatus()).isEqualTo(ResponseStatus.ABORTED);
        assertThat(log.topicsRead).containsExactly(TOPICS.rawEvents());
    }

    /**
     * The previous owner acted on the cancel, but its transaction (the abort's events) was rolled back: its commit
     * failed on a group generation change. What stays is the cancel on {@code llm.control}, which this owner's
     * inbox may never have seen (it started reading later, or its registry had finished the turn).
     */
    @Test
    void aCancelAcceptedBeforeTheTakeoverCancelsTheResumedTurn() {
        started();
        log.commands.add(ControlMessage.approval("turn-1", "call-9", true, null));
        log.commands.add(ControlMessage.cancel("turn-1", "the user stopped it"));

        TurnProgress progress = resume();

        assertThat(progress.endedStatus()).isNull();
        assertThat(active.cancel.isCancelled()).isTrue();
        assertThat(active.cancel.reason()).isEqualTo("the user stopped it");
        assertThat(log.since).containsOnly(Instant.ofEpochMilli(REQUESTED_AT - 60_000));
    }

    @Test
    void aTurnWithoutACancelIsNotCancelled() {
        started();
        log.commands.add(ControlMessage.toolStarted("turn-1", "call-1", 5L));

        resume();

        assertThat(active.cancel.isCancelled()).isFalse();
    }

    /** What a raw event that cannot be read was is not known (the turn's end, maybe): the turn is not resumed. */
    @Test
    void aTurnWithARawEventThatCannotBeReadIsNotResumed() {
        started();
        log.unreadable.add("llm.raw-events-0@9 (not a StreamEvent)");

        assertThatThrownBy(this::resume).isInstanceOfSatisfying(TurnHistory.UnreadableRecords.class, unreadable -> {
            assertThat(unreadable.readable().started()).isTrue();
            assertThat(unreadable).hasMessage("its raw event at llm.raw-events-0@9 (not a StreamEvent) cannot be read; "
                    + "the topology dead-letters it");
        });
        assertThat(active.cancel.isCancelled()).isFalse();
    }

    /** The end written because a record could not be read: the next takeover finds the turn ended, once and for all. */
    @Test
    void aTurnEndedAfterARawEventThatCannotBeReadStaysEnded() {
        started();
        log.unreadable.add("llm.raw-events-0@9 (not a StreamEvent)");
        event(new StreamPayload.ResponseError("run-1", ErrorInfo.of("TURN_CANNOT_RUN", "the turn cannot be resumed")));

        assertThat(resume().endedStatus()).isEqualTo(ResponseStatus.ERROR);
    }

    private TurnProgress resume() {
        return TurnResumer.progress(REQUEST, steps, "m", active, log);
    }

    private void started() {
        event(new StreamPayload.ResponseStart("run-1", "turn-1", "thread-1", null, "m", "anthropic", 1L));
    }

    private void event(StreamPayload payload) {
        log.events.add(payload);
    }

    /** A turn's records in memory, decoded; remembers what was read from when. */
    private static final class Log implements TurnResumer.TurnLog {
        final List<StreamPayload> events = new ArrayList<>();
        final List<ToolResult> results = new ArrayList<>();
        final List<ControlMessage> commands = new ArrayList<>();
        final List<String> topicsRead = new ArrayList<>();
        final List<Instant> since = new ArrayList<>();
        final List<String> unreadable = new ArrayList<>();

        @Override
        public List<String> unreadableRawEvents(String runId) {
            return runId.equals("run-1") ? unreadable : List.of();
        }

        @Override
        public List<StreamPayload> rawEvents(String runId, Instant from) {
            return read(TOPICS.rawEvents(), runId.equals("run-1") ? events : List.of(), from);
        }

        @Override
        public List<ToolResult> toolResults(String turnId, Instant from) {
            return read(TOPICS.toolResults(), turnId.equals("turn-1") ? results : List.of(), from);
        }

        @Override
        public List<ControlMessage> commands(String turnId, Instant from) {
            return read(TOPICS.control(), turnId.equals("turn-1") ? commands : List.of(), from);
        }

        private <T> List<T> read(String topic, List<T> values, Instant from) {
            topicsRead.add(topic);
            since.add(from);
            return values;
        }
    }
}
