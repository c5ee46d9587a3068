package io.turnstream.runtime;

import static io.turnstream.runtime.TopicsOnBroker.valueOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.turnstream.schema.SchemaRegistryException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Bounded reads without a consumer group, on a real broker: where they start and stop, and their failure policy. */
// turnstream-test-support's @UsesBroker, which this module cannot depend on (test-support depends on it)
@Tag("broker")
class GrouplessConsumerTest {

    private static final Duration PATIENCE = Duration.ofSeconds(60);

    @RegisterExtension
    static final TopicsOnBroker kafka = TopicsOnBroker.start();

    @Test
    void aReadToTheEndReadsWhatWasThereWhenItStartedAndNothingWrittenMeanwhile() throws Exception {
        String topic = kafka.newTopic(2);
        kafka.write(topic, 0, "first");
        kafka.write(topic, 1, "second");
        List<String> read = new CopyOnWriteArrayList<>();

        try (GrouplessConsumer reads = groupless()) {
            Map<TopicPartition, Long> from = reads.offsets(reads.partitionsOf(List.of(topic), PATIENCE),
                    TopicReader.Start.BEGINNING);
            reads.readToEnd(from, PATIENCE, record -> {
                read.add(valueOf(record));
                kafka.write(topic, record.partition(), "written while reading");
            });
        }

        assertThat(read).containsExactlyInAnyOrder("first", "second");
    }

    @Test
    void aReadStartsAtTheOffsetsItIsGiven() throws Exception {
        String topic = kafka.newTopic(1);
        kafka.write(topic, 0, "before");
        kafka.write(topic, 0, "from here");
        kafka.write(topic, 0, "and this");

        assertThat(readToEnd(partition(topic, 0), 1)).containsExactly("from here", "and this");
    }

    @Test
    void anOffsetDeletedBeforeTheReadStartsFromThePartitionsFirstRecord() throws Exception {
        String topic = kafka.newTopic(1);
        kafka.write(topic, 0, "deleted");
        kafka.write(topic, 0, "kept");
        kafka.admin().deleteRecords(Map.of(partition(topic, 0), RecordsToDelete.beforeOffset(1))).all().get();

        assertThat(readToEnd(partition(topic, 0), 0)).containsExactly("kept");
    }

    @Test
    void sinceAMomentWithNothingWrittenAfterItStartsAtTheEnd() throws Exception {
        String topic = kafka.newTopic(1);
        kafka.write(topic, 0, Instant.ofEpochMilli(1_000), "old");
        kafka.write(topic, 0, Instant.ofEpochMilli(2_000), "older than the moment too");

        try (GrouplessConsumer reads = groupless()) {
            Map<TopicPartition, Long> from = reads.offsets(List.of(partition(topic, 0)),
                    TopicReader.Start.since(Instant.ofEpochMilli(5_000)));

            assertThat(from).containsEntry(partition(topic, 0), 2L);
        }
    }

    @Test
    void aReadUpToTheHighWatermarkWaitsForAnOpenTransactionAndSeesOnlyWhatItCommitted() throws Exception {
        String topic = kafka.newTopic(1);
        kafka.write(topic, 0, "before");
        try (KafkaProducer<String, String> aborting = transactional();
             KafkaProducer<String, String> committing = transactional();
             GrouplessConsumer reads = groupless()) {
            aborting.beginTransaction();
            aborting.send(new ProducerRecord<>(topic, 0, "key", "aborted")).get();
            committing.beginTransaction();
            committing.send(new ProducerRecord<>(topic, 0, "key", "committed")).get();
            Map<TopicPartition, Long> untilBothResolve = highWatermark(partition(topic, 0));
            List<String> read = new CopyOnWriteArrayList<>();

            CompletableFuture<Void> reading = CompletableFuture.runAsync(() -> reads.read(Map.of(partition(topic, 0), 0L),
                    untilBothResolve, PATIENCE, record -> read.add(valueOf(record))));
            aborting.abortTransaction();
            committing.commitTransaction();
            reading.get();

            assertThat(read).containsExactly("before", "committed");
        }
    }

    @Test
    void aReadThatCannotGetToItsEndInTimeFailsNamingThePartitionAfterHandingOverWhatItRead() throws Exception {
        String topic = kafka.newTopic(1);
        kafka.write(topic, 0, "committed");
        List<String> read = new CopyOnWriteArrayList<>();
        try (KafkaProducer<String, String> leftOpen = transactional(); GrouplessConsumer reads = groupless()) {
            leftOpen.beginTransaction();
            leftOpen.send(new ProducerRecord<>(topic, 0, "key", "never resolved")).get();

            assertThatThrownBy(() -> reads.read(Map.of(partition(topic, 0), 0L), highWatermark(partition(topic, 0)),
                    Duration.ofSeconds(1), record -> read.add(valueOf(record))))
                    .isInstanceOf(TimeoutException.class)
                    .hasMessageContaining(topic + "-0");
            assertThat(read).containsExactly("committed");
            leftOpen.abortTransaction();
        }
    }

    @Test
    void aReadWhileTheClusterIsUnreachableFailsInTimeNamingThePartition() throws Exception {
        String topic = kafka.newTopic(1);
        kafka.write(topic, 0, "out of reach");

        try (GrouplessConsumer reads = groupless()) {
            kafka.broker().stop();
            try {
                assertThatThrownBy(() -> readToEnd(reads, partition(topic, 0), 0, Duration.ofSeconds(1)))
                        .isInstanceOf(TimeoutException.class)
                        .hasMessageContaining(topic + "-0");
            } finally {
                kafka.broker().start();
            }
        }
    }

    @Test
    void aRecordTheHandlerCannotTakeIsSkippedAndTheReadGoesOn() throws Exception {
        String topic = kafka.newTopic(1);
        kafka.write(topic, 0, "unreadable");
        kafka.write(topic, 0, "fine");
        List<String> read = new CopyOnWriteArrayList<>();

        try (GrouplessConsumer reads = groupless()) {
            reads.readToEnd(Map.of(partition(topic, 0), 0L), PATIENCE, record -> {
                if (valueOf(record).equals("unreadable")) {
                    throw new IllegalArgumentException("not a record this handler reads");
                }
                read.add(valueOf(record));
            });
        }

        assertThat(read).containsExactly("fine");
    }

    /** A handler that cannot take a record for now (the schema registry cannot be reached) fails the read: nothing skipped. */
    @Test
    void aRecordTheHandlerCannotTakeForNowFailsTheReadWithWhy() throws Exception {
        String topic = kafka.newTopic(1);
        kafka.write(topic, 0, "needs the registry");
        kafka.write(topic, 0, "fine");
        List<String> read = new CopyOnWriteArrayList<>();
        SchemaRegistryException down = new SchemaRegistryException("schema registry cannot be reached", -1, null);

        try (GrouplessConsumer reads = groupless()) {
            assertThatThrownBy(() -> reads.readToEnd(Map.of(partition(topic, 0), 0L), PATIENCE, record -> {
                if (valueOf(record).equals("needs the registry")) {
                    throw new IllegalStateException("cannot decode", down);
                }
                read.add(valueOf(record));
            })).isSameAs(down);
        }

        assertThat(read).isEmpty();
    }

    @Test
    void theConsumerCanReadAgainAfterARead() throws Exception {
        String first = kafka.newTopic(1);
        String second = kafka.newTopic(1);
        kafka.write(first, 0, "one");
        kafka.write(second, 0, "two");

        try (GrouplessConsumer reads = groupless()) {
            assertThat(readToEnd(reads, partition(first, 0), 0)).containsExactly("one");
            assertThat(readToEnd(reads, partition(second, 0), 0)).containsExactly("two");
        }
    }

    @Test
    void aMissingTopicFailsWithItsName() {
        String missing = "never-created-" + UUID.randomUUID();

        try (GrouplessConsumer reads = groupless()) {
            assertThatThrownBy(() -> reads.partitionsOf(List.of(missing), Duration.ofMillis(500)))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("topic " + missing + " does not exist");
        }
    }

    private static GrouplessConsumer groupless() {
        return new GrouplessConsumer("test-reads", kafka.clientProperties());
    }

    private static List<String> readToEnd(TopicPartition partition, long from) {
        try (GrouplessConsumer reads = groupless()) {
            return readToEnd(reads, partition, from);
        }
    }

    private static List<String> readToEnd(GrouplessConsumer reads, TopicPartition partition, long from) {
        return readToEnd(reads, partition, from, PATIENCE);
    }

    private static List<String> readToEnd(GrouplessConsumer reads, TopicPartition partition, long from, Duration limit) {
        List<String> read = new ArrayList<>();
        reads.readToEnd(Map.of(partition, from), limit, record -> read.add(valueOf(record)));
        return read;
    }

    private static Map<TopicPartition, Long> highWatermark(TopicPartition partition) {
        try {
            return Map.of(partition, kafka.admin().listOffsets(Map.of(partition, OffsetSpec.latest()),
                    new ListOffsetsOptions(IsolationLevel.READ_UNCOMMITTED)).partitionResult(partition).get().offset());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static KafkaProducer<String, String> transactional() {
        Properties props = kafka.producerProperties();
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "test-" + UUID.randomUUID());
        KafkaProducer<String, String> transactional = new KafkaProducer<>(props);
        transactional.initTransactions();
        return transactional;
    }

    private static TopicPartition partition(String topic, int partition) {
        return new TopicPartition(topic, partition);
    }
}
