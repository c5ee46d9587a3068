package io.turnstream.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Bounded reads without a consumer group, on a real broker: where they start and stop, and their failure policy. */
class GrouplessConsumerTest {

    private static final Duration PATIENCE = Duration.ofSeconds(60);

    private static EmbeddedKafkaBroker broker;
    private static Admin admin;
    private static KafkaProducer<String, String> producer;

    @BeforeAll
    static void startBroker() {
        broker = EmbeddedKafkaBroker.onFreePort().start();
        admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()));
        producer = new KafkaProducer<>(producerProperties());
    }

    @AfterAll
    static void stopBroker() {
        producer.close();
        admin.close();
        broker.close();
    }

    @Test
    void aReadToTheEndReadsWhatWasThereWhenItStartedAndNothingWrittenMeanwhile() throws Exception {
        String topic = newTopic(2);
        write(topic, 0, "first");
        write(topic, 1, "second");
        List<String> read = new CopyOnWriteArrayList<>();

        try (GrouplessConsumer reads = groupless()) {
            Map<TopicPartition, Long> from = reads.offsets(reads.partitionsOf(List.of(topic), PATIENCE),
                    TopicReader.Start.BEGINNING);
            reads.readToEnd(from, PATIENCE, record -> {
                read.add(valueOf(record));
                write(topic, record.partition(), "written while reading");
            });
        }

        assertThat(read).containsExactlyInAnyOrder("first", "second");
    }

    @Test
    void aReadStartsAtTheOffsetsItIsGiven() throws Exception {
        String topic = newTopic(1);
        write(topic, 0, "before");
        write(topic, 0, "from here");
        write(topic, 0, "and this");
        List<String> read = new CopyOnWriteArrayList<>();

        try (GrouplessConsumer reads = groupless()) {
            reads.readToEnd(Map.of(partition(topic, 0), 1L), PATIENCE, record -> read.add(valueOf(record)));
        }

        assertThat(read).containsExactly("from here", "and this");
    }

    @Test
    void anOffsetDeletedBeforeTheReadStartsFromThePartitionsFirstRecord() throws Exception {
        String topic = newTopic(1);
        write(topic, 0, "deleted");
        write(topic, 0, "kept");
        admin.deleteRecords(Map.of(partition(topic, 0), RecordsToDelete.beforeOffset(1))).all().get();
        List<String> read = new CopyOnWriteArrayList<>();

        try (GrouplessConsumer reads = groupless()) {
            reads.readToEnd(Map.of(partition(topic, 0), 0L), PATIENCE, record -> read.add(valueOf(record)));
        }

        assertThat(read).containsExactly("kept");
    }

    @Test
    void sinceAMomentWithNothingWrittenAfterItStartsAtTheEnd() throws Exception {
        String topic = newTopic(1);
        write(topic, 0, Instant.ofEpochMilli(1_000), "old");
        write(topic, 0, Instant.ofEpochMilli(2_000), "older than the moment too");

        try (GrouplessConsumer reads = groupless()) {
            Map<TopicPartition, Long> from = reads.offsets(List.of(partition(topic, 0)),
                    TopicReader.Start.since(Instant.ofEpochMilli(5_000)));

            assertThat(from).containsEntry(partition(topic, 0), 2L);
        }
    }

    @Test
    void aReadUpToTheHighWatermarkWaitsForAnOpenTransactionAndSeesOnlyWhatItCommitted() throws Exception {
        String topic = newTopic(1);
        write(topic, 0, "before");
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
        String topic = newTopic(1);
        write(topic, 0, "committed");
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
    void aRecordTheHandlerCannotTakeIsSkippedAndTheReadGoesOn() throws Exception {
        String topic = newTopic(1);
        write(topic, 0, "unreadable");
        write(topic, 0, "fine");
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

    @Test
    void theConsumerCanReadAgainAfterARead() throws Exception {
        String first = newTopic(1);
        String second = newTopic(1);
        write(first, 0, "one");
        write(second, 0, "two");
        List<String> read = new CopyOnWriteArrayList<>();

        try (GrouplessConsumer reads = groupless()) {
            reads.readToEnd(Map.of(partition(first, 0), 0L), PATIENCE, record -> read.add(valueOf(record)));
            reads.readToEnd(Map.of(partition(second, 0), 0L), PATIENCE, record -> read.add(valueOf(record)));
        }

        assertThat(read).containsExactly("one", "two");
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
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        return new GrouplessConsumer("test-reads", props);
    }

    private static Map<TopicPartition, Long> highWatermark(TopicPartition partition) {
        try {
            return Map.of(partition, admin.listOffsets(Map.of(partition, OffsetSpec.latest()),
                    new ListOffsetsOptions(IsolationLevel.READ_UNCOMMITTED)).partitionResult(partition).get().offset());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static KafkaProducer<String, String> transactional() {
        Properties props = new Properties();
        props.putAll(producerProperties());
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "test-" + UUID.randomUUID());
        KafkaProducer<String, String> transactional = new KafkaProducer<>(props);
        transactional.initTransactions();
        return transactional;
    }

    private static Map<String, Object> producerProperties() {
        return Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    }

    private static String newTopic(int partitions) throws Exception {
        String topic = "groupless-" + UUID.randomUUID();
        admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
        return topic;
    }

    private static TopicPartition partition(String topic, int partition) {
        return new TopicPartition(topic, partition);
    }

    private static void write(String topic, int partition, String value) throws Exception {
        producer.send(new ProducerRecord<>(topic, partition, "key", value)).get();
    }

    private static void write(String topic, int partition, Instant at, String value) throws Exception {
        producer.send(new ProducerRecord<>(topic, partition, at.toEpochMilli(), "key", value)).get();
    }

    private static String valueOf(ConsumerRecord<String, byte[]> record) {
        return new String(record.value(), StandardCharsets.UTF_8);
    }
}
