package io.turnstream.gateway.ownership;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.gateway.loop.TurnProgress;
import io.turnstream.gateway.loop.TurnRegistry;
import io.turnstream.gateway.provider.StepOutcome;
import io.turnstream.gateway.provider.ToolCallRequest;
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.model.Json;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.ToolResult;
import io.turnstream.model.Topics;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.model.WireFormat;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/**
 * What a gateway taking a turn over reads of it, without a broker: the run's raw events, and the turn's
 * tool results only when it waits for some, from a minute before the turn was accepted.
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
                "tool_calls", null, List.of(CALL), Json.MAPPER.createArrayNode(), null, false, false, null, 2), false)));
        ToolResult result = new ToolResult("call-1", "turn-1", "read_file", true, TextNode.valueOf("text"), null, 1, 2);
        log.add(TOPICS.toolResults(), "turn-1", Json.toBytes(result));

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
        assertThat(log.topicsRead).containsExactly(TOPICS.rawEvents());
    }

    @Test
    void aTurnThatEndedReadsNoResultsAndIsNotResumed() {
        started();
        steps.add(REQUEST.stepDone(1, TurnProgress.checkpoint("m", null, null, new StepOutcome(ResponseStatus.COMPLETE,
                "tool_calls", null, List.of(CALL), Json.MAPPER.createArrayNode(), null, false, false, null, 2), false)));
        event(new StreamPayload.ResponseDone("run-1", ResponseStatus.ABORTED, null, null));

        TurnProgress progress = resume();

        assertThat(progress.endedStatus()).isEqualTo(ResponseStatus.ABORTED);
        assertThat(log.topicsRead).containsExactly(TOPICS.rawEvents());
    }

    private TurnProgress resume() {
        return TurnResumer.progress(TOPICS, WireFormat.JSON, REQUEST, steps, "m", active, log);
    }

    private void started() {
        event(new StreamPayload.ResponseStart("run-1", "turn-1", "thread-1", null, "m", "anthropic", 1L));
    }

    private void event(StreamPayload payload) {
        log.add(TOPICS.rawEvents(), "run-1", Json.toBytes(StreamEvent.of("e", 1L, "run-1", payload)));
    }

    /** Topics in memory, by key; remembers what was read from when. */
    private static final class Log implements TurnResumer.KeyReads {
        final Map<String, List<ConsumerRecord<String, byte[]>>> records = new HashMap<>();
        final List<String> topicsRead = new ArrayList<>();
        final List<Instant> since = new ArrayList<>();

        void add(String topic, String key, byte[] value) {
            List<ConsumerRecord<String, byte[]>> kept = records.computeIfAbsent(topic + "/" + key, k -> new ArrayList<>());
            kept.add(new ConsumerRecord<>(topic, 0, kept.size(), key, value));
        }

        @Override
        public void read(String topic, String key, Instant from, io.turnstream.runtime.GrouplessConsumer.RecordHandler handler) {
            topicsRead.add(topic);
            since.add(from);
            for (ConsumerRecord<String, byte[]> record : records.getOrDefault(topic + "/" + key, List.of())) {
                try {
                    handler.handle(record);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
        }
    }
}
