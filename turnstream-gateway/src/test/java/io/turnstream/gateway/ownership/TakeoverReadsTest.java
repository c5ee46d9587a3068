package io.turnstream.gateway.ownership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.gateway.loop.TurnProgress;
import io.turnstream.gateway.loop.TurnRegistry;
import io.turnstream.gateway.provider.StepOutcome;
import io.turnstream.gateway.provider.ToolCallRequest;
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.model.ControlMessage;
import io.turnstream.model.Json;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.ToolResult;
import io.turnstream.model.Topics;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.model.WireFormat;
import io.turnstream.schema.RegistryOutage;
import io.turnstream.schema.SchemaRegistryException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.KafkaException;
import org.junit.jupiter.api.Test;

/**
 * A takeover of a partition with several unfinished turns, without a broker: each topic is read once for all of them
 * (before, once per turn), the three together, from a minute before the earliest was accepted, and each turn gets
 * its own records.
 */
class TakeoverReadsTest {

    private static final Topics TOPICS = Topics.DEFAULTS;

    private final List<ConsumerRecord<String, byte[]>> written = new ArrayList<>();
    private final Map<String, Integer> readsByTopic = new ConcurrentHashMap<>();
    private final List<Instant> readSince = new CopyOnWriteArrayList<>();
    private final Map<String, Set<String>> readKeys = new ConcurrentHashMap<>();
    /** Each read waits here until all three have begun: reads made one after the other never get past it. */
    private final CountDownLatch allThreeReading = new CountDownLatch(3);

    @Test
    void severalUnfinishedTurnsReadEachTopicOnceAndGetTheirOwnRecords() {
        List<TurnRequestRecord> turns = List.of(request("a", 3_000_000), request("b", 2_000_000), request("c", 4_000_000));
        for (TurnRequestRecord turn : turns) {
            rawEvent(turn.runId(), new StreamPayload.ResponseStart(turn.runId(), turn.turnId(), "thread-1", null, "m",
                    "simulated", 1L));
        }
        rawEvent("run-b", new StreamPayload.ResponseDone("run-b", ResponseStatus.COMPLETE, null,
                null));
        written.add(new ConsumerRecord<>(TOPICS.rawEvents(), 0, written.size(), "run-c",
                "{not a stream event".getBytes(StandardCharsets.UTF_8)));
        written.add(new ConsumerRecord<>(TOPICS.control(), 0, written.size(), "turn-a",
                Json.toBytes(ControlMessage.cancel("turn-a", "the user stopped it"))));
        TakeoverReads reads = new TakeoverReads(turns, TOPICS, WireFormat.JSON, this::read);

        TurnRegistry registry = new TurnRegistry();
        Map<String, Object> outcomes = new HashMap<>();
        Map<String, TurnRegistry.ActiveTurn> actives = new HashMap<>();
        for (TurnRequestRecord turn : turns) {
            TurnRegistry.ActiveTurn active = registry.register(new TurnStatus(turn.turnId(), "thread-1", turn.runId(),
                    TurnPhase.RUNNING));
            actives.put(turn.turnId(), active);
            try {
                outcomes.put(turn.turnId(), TurnResumer.progress(turn, List.of(), "m", active, reads));
            } catch (TurnHistory.UnreadableRecords unreadable) {
                outcomes.put(turn.turnId(), unreadable.getMessage());
            }
        }

        assertThat(readsByTopic).as("each topic once for the three turns, all three read together at the first ask")
                .containsExactlyInAnyOrderEntriesOf(Map.of(TOPICS.rawEvents(), 1, TOPICS.control(), 1,
                        TOPICS.toolResults(), 1));
        assertThat(readSince).as("from a minute before the earliest was accepted")
                .containsOnly(Instant.ofEpochMilli(2_000_000 - 60_000));
        assertThat(readKeys).containsExactlyInAnyOrderEntriesOf(Map.of(
                TOPICS.rawEvents(), Set.of("run-a", "run-b", "run-c"),
                TOPICS.control(), Set.of("turn-a", "turn-b", "turn-c"),
                TOPICS.toolResults(), Set.of("turn-a", "turn-b", "turn-c")));
        assertThat(outcomes.get("turn-a")).isInstanceOfSatisfying(TurnProgress.class, progress -> {
            assertThat(progress.started()).isTrue();
            assertThat(progress.endedStatus()).isNull();
        });
        assertThat(actives.get("turn-a").cancel.reason()).isEqualTo("the user stopped it");
        assertThat(outcomes.get("turn-b")).isInstanceOfSatisfying(TurnProgress.class, progress ->
                assertThat(progress.endedStatus()).isEqualTo(ResponseStatus.COMPLETE));
        assertThat(outcomes.get("turn-c")).asString().startsWith("its raw event at " + TOPICS.rawEvents() + "-0@4 (");
    }

    @Test
    void aTurnWaitingForTheToolResultsReadDoesNotHoldUpTheTurnsThatNeedOnlyTheirRawEvents() throws Exception {
        TurnRequestRecord waiting = request("a", 3_000_000);
        TurnRequestRecord streaming = request("b", 3_000_000);
        ToolCallRequest call = new ToolCallRequest("run-a-s1-1", "call-1", "read_file", "{}");
        List<TurnRequestRecord> waitingSteps = List.of(waiting.stepDone(1, TurnProgress.checkpoint("m", null, null,
                new StepOutcome(ResponseStatus.COMPLETE, "tool_calls", null, List.of(call),
                        Json.MAPPER.createArrayNode(), null, false, false, null, 2), false, null)));
        for (TurnRequestRecord turn : List.of(waiting, streaming)) {
            rawEvent(turn.runId(), new StreamPayload.ResponseStart(turn.runId(), turn.turnId(), "thread-1", null, "m",
                    "simulated", 1L));
        }
        ToolResult result = new ToolResult("call-1", "turn-a", "read_file", true, TextNode.valueOf("text"), null, 1, 2);
        written.add(new ConsumerRecord<>(TOPICS.toolResults(), 0, written.size(), "turn-a", Json.toBytes(result)));
        CountDownLatch toolResultsMayEnd = new CountDownLatch(1);
        TakeoverReads reads = new TakeoverReads(List.of(waiting, streaming), TOPICS, WireFormat.JSON,
                (topic, keys, since) -> {
                    if (topic.equals(TOPICS.toolResults()) && !released(toolResultsMayEnd)) {
                        throw new KafkaException("the test never let the tool results' read end");
                    }
                    return written.stream().filter(record -> record.topic().equals(topic)
                            && keys.contains(record.key())).toList();
                });
        TurnRegistry registry = new TurnRegistry();
        TurnRegistry.ActiveTurn waitingTurn = registry.register(new TurnStatus("turn-a", "thread-1", "run-a",
                TurnPhase.RUNNING));
        TurnRegistry.ActiveTurn streamingTurn = registry.register(new TurnStatus("turn-b", "thread-1", "run-b",
                TurnPhase.RUNNING));
        // the first ask starts the three reads; the raw events' and the cancels' end at once
        reads.commands("turn-b", Instant.EPOCH);
        reads.rawEvents("run-b", Instant.EPOCH);

        CompletableFuture<TurnProgress> waitingProgress = new CompletableFuture<>();
        Thread waitingThread = new Thread(() -> waitingProgress.complete(
                TurnResumer.progress(waiting, waitingSteps, "m", waitingTurn, reads)), "turn-a");
        waitingThread.start();
        await("turn a waits for the tool results' read").atMost(Duration.ofSeconds(30))
                .until(() -> waitingThread.getState() == Thread.State.WAITING);

        TurnProgress streamingProgress = CompletableFuture.supplyAsync(() -> TurnResumer.progress(streaming,
                List.of(), "m", streamingTurn, reads)).get(30, TimeUnit.SECONDS);

        assertThat(streamingProgress.started()).as("turn b is resumed while the tool results are still being read")
                .isTrue();
        assertThat(waitingProgress).isNotDone();
        toolResultsMayEnd.countDown();
        assertThat(waitingProgress.get(30, TimeUnit.SECONDS).awaiting().calls()).containsExactly(call);
        assertThat(waitingTurn.result("call-1")).isCompletedWithValue(result);
    }

    /**
     * A raw event, a cancel or a tool result read while the schema registry cannot be reached is not an unreadable
     * record: the turn is neither ended as one it cannot resume nor resumed without it; the registry's exception goes
     * to the turn (which has its partition taken over again), and a next ask decodes the records again.
     */
    @Test
    void recordsReadWhileTheSchemaRegistryIsDownAreNotTakenForUnreadableOnes() {
        TurnRequestRecord turn = request("a", 3_000_000);
        rawEvent(turn.runId(), new StreamPayload.ResponseStart(turn.runId(), turn.turnId(), "thread-1", null, "m",
                "simulated", 1L));
        written.add(new ConsumerRecord<>(TOPICS.control(), 0, written.size(), "turn-a",
                Json.toBytes(ControlMessage.cancel("turn-a", "the user stopped it"))));
        ToolResult result = new ToolResult("call-1", "turn-a", "read_file", true, TextNode.valueOf("text"), null, 1, 2);
        written.add(new ConsumerRecord<>(TOPICS.toolResults(), 0, written.size(), "turn-a", Json.toBytes(result)));
        RegistryOutage registry = new RegistryOutage();
        TakeoverReads reads = new TakeoverReads(List.of(turn), TOPICS, registry, (topic, keys, since) ->
                written.stream().filter(record -> record.topic().equals(topic) && keys.contains(record.key())).toList());
        TurnRegistry.ActiveTurn active = new TurnRegistry().register(new TurnStatus("turn-a", "thread-1", "run-a",
                TurnPhase.RUNNING));

        registry.down = true;
        assertThatThrownBy(() -> TurnResumer.progress(turn, List.of(), "m", active, reads))
                .isInstanceOf(SchemaRegistryException.class);
        assertThatThrownBy(() -> reads.commands("turn-a", Instant.EPOCH)).isInstanceOf(SchemaRegistryException.class);
        assertThatThrownBy(() -> reads.toolResults("turn-a", Instant.EPOCH))
                .isInstanceOf(SchemaRegistryException.class);

        registry.down = false;
        TurnProgress progress = TurnResumer.progress(turn, List.of(), "m", active, reads);

        assertThat(progress.started()).isTrue();
        assertThat(progress.endedStatus()).isNull();
        assertThat(reads.unreadableRawEvents("run-a")).isEmpty();
        assertThat(active.cancel.reason()).isEqualTo("the user stopped it");
        assertThat(reads.toolResults("turn-a", Instant.EPOCH)).containsExactly(result);
    }

    private static boolean released(CountDownLatch latch) {
        try {
            return latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private List<ConsumerRecord<String, byte[]>> read(String topic, Set<String> keys, Instant since) {
        readsByTopic.merge(topic, 1, Integer::sum);
        readSince.add(since);
        readKeys.put(topic, Set.copyOf(keys));
        allThreeReading.countDown();
        try {
            if (!allThreeReading.await(30, TimeUnit.SECONDS)) {
                throw new KafkaException("the three topics were not read together: " + readsByTopic.keySet());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KafkaException(e);
        }
        return written.stream().filter(record -> record.topic().equals(topic) && keys.contains(record.key())).toList();
    }

    private void rawEvent(String runId, StreamPayload payload) {
        StreamEvent event = new StreamEvent("e" + written.size(), 1L, null, runId, payload.type(), payload);
        written.add(new ConsumerRecord<>(TOPICS.rawEvents(), 0, written.size(), runId, Json.toBytes(event)));
    }

    private static TurnRequestRecord request(String name, long requestedAt) {
        return TurnRequestRecord.request("turn-" + name, "thread-1", "run-" + name, null, requestedAt,
                Json.MAPPER.createObjectNode().put("prompt", "hi"));
    }
}
