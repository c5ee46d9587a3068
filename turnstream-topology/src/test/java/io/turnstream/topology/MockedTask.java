package io.turnstream.topology;

import io.turnstream.model.Json;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.Topics;
import java.util.List;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * One task of the topology without Kafka Streams' task: an {@link UpsertProcessor} with its stores (in memory, each
 * wrapped as the topology wraps it) in a mock context, on the test's thread. Unlike TopologyTestDriver, which commits
 * after every record, it commits only when the test says so, and a test sees what the processor asks of the context.
 */
final class MockedTask {

    private static final long START = 1_000_000;

    final MockProcessorContext<String, byte[]> context = new MockProcessorContext<>();
    final UpsertProcessor processor;
    private final int partition;
    private final BeforeCommitStore<?, ?> deadlines;
    private long offset;

    MockedTask(int partition, BehindTasks thread) {
        this.partition = partition;
        this.processor = new UpsertProcessor(TopologyConfig.defaults(), () -> thread);
        context.setCurrentSystemTimeMs(START);
        addStore(UpsertTopology.TURNS_STORE, Serdes.String(), StateSerde.of(TurnState.class));
        addStore(UpsertTopology.ITEMS_STORE, Serdes.String(), StateSerde.of(ItemState.class));
        addStore(UpsertTopology.CHUNKS_STORE, Serdes.Bytes(), Serdes.ByteArray());
        addStore(UpsertTopology.DEADLINES_STORE, Serdes.Bytes(), Serdes.ByteArray());
        deadlines = BeforeCommitStore.under(context.getStateStore(UpsertTopology.DEADLINES_STORE));
        processor.init(context);
    }

    /** The run id of this task's events: one per partition. */
    String runId() {
        return "run-" + partition;
    }

    void processRecordSentMsAgo(long ageMs) {
        // what the record holds does not matter to the pacing, only its timestamp (the gateway's send time)
        process(Events.delta("item-1", "hi"), ageMs);
    }

    void process(StreamPayload payload) {
        process(payload, 0);
    }

    void process(StreamPayload payload, long ageMs) {
        context.setRecordMetadata(Topics.DEFAULTS.rawEvents(), partition, offset);
        long now = context.currentSystemTimeMs();
        byte[] value = Json.toBytes(StreamEvent.of("e" + offset++, now - ageMs, runId(), payload));
        processor.process(new Record<>(runId(), value, now - ageMs));
    }

    /** Whether the processor asked for a commit since the last one. */
    boolean asked() {
        return context.committed();
    }

    void advanceWallClock(long ms) {
        context.setCurrentSystemTimeMs(context.currentSystemTimeMs() + ms);
    }

    /** What a task commit does to the processor: Kafka Streams flushes its stores' caches, and the hook runs. */
    void commit() {
        deadlines.flushCache();
        context.resetCommit();
    }

    void tick() {
        context.scheduledPunctuators().get(0).getPunctuator().punctuate(context.currentSystemTimeMs());
    }

    /** The records forwarded to {@code sink} so far, in order. */
    List<Record<String, byte[]>> forwardedTo(String sink) {
        return context.forwarded().stream().filter(f -> sink.equals(f.childName().orElse(null)))
                .map(f -> new Record<String, byte[]>(f.record().key(), f.record().value(), f.record().timestamp(),
                        f.record().headers()))
                .toList();
    }

    private <K, V> void addStore(String name, Serde<K> keys, Serde<V> values) {
        KeyValueStore<K, V> store = BeforeCommitStore.builder(
                Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(name), keys, values).withLoggingDisabled())
                .build();
        store.init(context.getStateStoreContext(), store);
        context.addStateStore(store);
    }
}
