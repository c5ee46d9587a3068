package io.turnstream.topology;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The processor asks Kafka Streams for its commits as {@link CommitPacer} decides: every 75 ms while its records
 * are fresh, from the record loop and from the punctuator, and not at all while they are more than a second old
 * (Kafka Streams' own 500 ms interval commits then). TopologyTestDriver commits after every record, so only a
 * mock context shows the requests; a commit reaches the pacer through the deadlines store's commit hook.
 */
class UpsertProcessorCommitTest {

    private static final long START = 1_000_000;

    private final MockProcessorContext<String, byte[]> context = new MockProcessorContext<>();
    private final UpsertProcessor processor = new UpsertProcessor(TopologyConfig.defaults());
    private BeforeCommitStore<?, ?> deadlines;
    private long offset;

    @BeforeEach
    void initProcessorWithItsStores() {
        assertThat(TopologyConfig.defaults().commitPacing().adaptive()).as("the shipped default paces").isTrue();
        context.setCurrentSystemTimeMs(START);
        addStore(UpsertTopology.TURNS_STORE, Serdes.String(), StateSerde.of(TurnState.class));
        addStore(UpsertTopology.ITEMS_STORE, Serdes.String(), StateSerde.of(ItemState.class));
        addStore(UpsertTopology.CHUNKS_STORE, Serdes.Bytes(), Serdes.ByteArray());
        addStore(UpsertTopology.DEADLINES_STORE, Serdes.Bytes(), Serdes.ByteArray());
        deadlines = BeforeCommitStore.under(context.getStateStore(UpsertTopology.DEADLINES_STORE));
        processor.init(context);
    }

    @Test
    void freshInputAsksForACommitOnceTheIntervalHasPassedSinceTheLastCommit() {
        processRecordSentMsAgo(20);
        assertThat(context.committed()).isFalse();

        advanceWallClock(75);
        processRecordSentMsAgo(20);
        assertThat(context.committed()).isTrue();

        commit();
        advanceWallClock(50);
        processRecordSentMsAgo(20);
        assertThat(context.committed()).as("50 ms after the last commit").isFalse();
    }

    @Test
    void inputMoreThanASecondOldAsksForNoCommitAndLeavesThemToKafkaStreams() {
        advanceWallClock(400);
        processRecordSentMsAgo(1_500);
        assertThat(context.committed()).isFalse();

        processRecordSentMsAgo(900);
        assertThat(context.committed()).as("fresh again").isTrue();
    }

    @Test
    void theTickAsksForTheCommitWhenNoRecordComes() {
        processRecordSentMsAgo(10);
        commit();

        advanceWallClock(100);
        tick();

        assertThat(context.committed()).isTrue();
    }

    @Test
    void theTickAsksForNoCommitWhileTheLastRecordWasBehind() {
        processRecordSentMsAgo(5_000);
        commit();

        advanceWallClock(100);
        tick();

        assertThat(context.committed()).isFalse();
    }

    private void processRecordSentMsAgo(long ageMs) {
        // what the record holds does not matter to the pacing, only its timestamp (the gateway's send time)
        context.setRecordMetadata("llm.raw-events", 0, offset++);
        long now = context.currentSystemTimeMs();
        processor.process(new Record<>("run-1", Events.rawDelta("run-1", "item-1", "hi").getBytes(StandardCharsets.UTF_8),
                now - ageMs));
    }

    private void advanceWallClock(long ms) {
        context.setCurrentSystemTimeMs(context.currentSystemTimeMs() + ms);
    }

    /** What a task commit does to the processor: Kafka Streams flushes its stores' caches, and the hook runs. */
    private void commit() {
        deadlines.flushCache();
        context.resetCommit();
    }

    private void tick() {
        context.scheduledPunctuators().get(0).getPunctuator().punctuate(context.currentSystemTimeMs());
    }

    private <K, V> void addStore(String name, Serde<K> keys, Serde<V> values) {
        KeyValueStore<K, V> store = BeforeCommitStore.builder(
                Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(name), keys, values).withLoggingDisabled()).build();
        store.init(context.getStateStoreContext(), store);
        context.addStateStore(store);
    }
}
