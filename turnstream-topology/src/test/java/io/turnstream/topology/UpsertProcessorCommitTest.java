package io.turnstream.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.Json;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.Topics;
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
 * are fresh, from the record loop and from the punctuator, and not at all while a task of its stream thread reads
 * records more than a second old (Kafka Streams' own 500 ms interval commits then), nor for a task that read and
 * wrote nothing since the last commit. TopologyTestDriver commits after every record, so only a mock context
 * shows the requests; a commit reaches the pacer through the deadlines store's commit hook. Two tasks of one
 * stream thread are two processors sharing one {@link BehindTasks}.
 */
class UpsertProcessorCommitTest {

    private static final long START = 1_000_000;

    private final BehindTasks thread = new BehindTasks();
    private final Task task = new Task(0);
    private final Task other = new Task(1);

    @BeforeEach
    void paced() {
        assertThat(TopologyConfig.defaults().commitPacing().adaptive()).as("the shipped default paces").isTrue();
    }

    @Test
    void freshInputAsksForACommitOnceTheIntervalHasPassedSinceTheLastCommit() {
        task.processRecordSentMsAgo(20);
        assertThat(task.asked()).isFalse();

        task.advanceWallClock(75);
        task.processRecordSentMsAgo(20);
        assertThat(task.asked()).isTrue();

        task.commit();
        task.advanceWallClock(50);
        task.processRecordSentMsAgo(20);
        assertThat(task.asked()).as("50 ms after the last commit").isFalse();
    }

    @Test
    void inputMoreThanASecondOldAsksForNoCommitAndLeavesThemToKafkaStreams() {
        task.advanceWallClock(400);
        task.processRecordSentMsAgo(1_500);
        assertThat(task.asked()).isFalse();

        task.processRecordSentMsAgo(900);
        assertThat(task.asked()).as("fresh again").isTrue();
    }

    @Test
    void theTickAsksForTheCommitWhenNoRecordComes() {
        task.processRecordSentMsAgo(10);
        assertThat(task.asked()).as("at once after the last commit").isFalse();

        task.advanceWallClock(100);
        task.tick();

        assertThat(task.asked()).isTrue();
    }

    @Test
    void theTickAsksForTheCommitOfTheLiveTextItWrote() {
        task.process(Events.responseStart("turn-1", "sim"), 10);
        task.process(Events.itemStart("msg-1", "message"), 10);
        task.process(Events.delta("msg-1", "Hello"), 10);
        task.commit();

        task.advanceWallClock(100);
        task.tick();

        assertThat(task.context.forwarded()).as("the item's text appended at the tick")
                .anyMatch(r -> UpsertTopology.ITEM_APPENDS_SINK.equals(r.childName().orElse(null)));
        assertThat(task.asked()).isTrue();
    }

    @Test
    void theTickAsksForNoCommitWhileTheLastRecordWasBehind() {
        task.processRecordSentMsAgo(5_000);
        task.commit();

        task.advanceWallClock(100);
        task.tick();

        assertThat(task.asked()).isFalse();
    }

    /**
     * The cluster run's starved partitions: a task with no input of its own ticked a commit every 100 ms while
     * the other task of its thread read a backlog, so the thread committed after every record it processed.
     */
    @Test
    void aTaskThatReadAndWroteNothingAsksForNoCommit() {
        task.advanceWallClock(1_000);
        task.tick();
        task.advanceWallClock(100);
        task.tick();

        assertThat(task.asked()).isFalse();
    }

    @Test
    void noTaskAsksWhileAnotherTaskOfItsThreadReadsABacklog() {
        other.processRecordSentMsAgo(30_000);
        task.advanceWallClock(100);
        other.advanceWallClock(100);
        task.processRecordSentMsAgo(10);
        task.tick();
        assertThat(task.asked()).as("fresh input, but the thread's other task is behind").isFalse();

        other.processRecordSentMsAgo(40);
        task.processRecordSentMsAgo(10);
        assertThat(task.asked()).as("the other task's input is fresh again").isTrue();
    }

    @Test
    void aTaskThatReadNothingSinceItsLastTickHasCaughtUp() {
        other.processRecordSentMsAgo(30_000);
        other.advanceWallClock(100);
        other.tick();
        task.advanceWallClock(100);
        task.processRecordSentMsAgo(10);
        assertThat(task.asked()).as("the other task read a record since its last tick").isFalse();

        other.advanceWallClock(100);
        other.tick();
        task.processRecordSentMsAgo(10);
        assertThat(task.asked()).as("the other task's queue is empty: it caught up").isTrue();
    }

    @Test
    void aTaskClosedWhileBehindHoldsNoOtherBack() {
        other.processRecordSentMsAgo(30_000);
        other.processor.close();

        task.advanceWallClock(100);
        task.processRecordSentMsAgo(10);

        assertThat(task.asked()).isTrue();
    }

    /** One task: a processor with its stores in a mock context, on the test's stream thread. */
    private final class Task {

        private final MockProcessorContext<String, byte[]> context = new MockProcessorContext<>();
        private final UpsertProcessor processor = new UpsertProcessor(TopologyConfig.defaults(), () -> thread);
        private final int partition;
        private final BeforeCommitStore<?, ?> deadlines;
        private long offset;

        private Task(int partition) {
            this.partition = partition;
            context.setCurrentSystemTimeMs(START);
            addStore(UpsertTopology.TURNS_STORE, Serdes.String(), StateSerde.of(TurnState.class));
            addStore(UpsertTopology.ITEMS_STORE, Serdes.String(), StateSerde.of(ItemState.class));
            addStore(UpsertTopology.CHUNKS_STORE, Serdes.Bytes(), Serdes.ByteArray());
            addStore(UpsertTopology.DEADLINES_STORE, Serdes.Bytes(), Serdes.ByteArray());
            deadlines = BeforeCommitStore.under(context.getStateStore(UpsertTopology.DEADLINES_STORE));
            processor.init(context);
        }

        private void processRecordSentMsAgo(long ageMs) {
            // what the record holds does not matter to the pacing, only its timestamp (the gateway's send time)
            process(Events.delta("item-1", "hi"), ageMs);
        }

        private void process(StreamPayload payload, long ageMs) {
            context.setRecordMetadata(Topics.DEFAULTS.rawEvents(), partition, offset);
            long now = context.currentSystemTimeMs();
            byte[] value = Json.toBytes(StreamEvent.of("e" + offset++, now - ageMs, "run-" + partition, payload));
            processor.process(new Record<>("run-" + partition, value, now - ageMs));
        }

        private boolean asked() {
            return context.committed();
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
                    Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(name), keys, values).withLoggingDisabled())
                    .build();
            store.init(context.getStateStoreContext(), store);
            context.addStateStore(store);
        }
    }
}
