package io.turnstream.gateway.ownership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.turnstream.model.Json;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.Topics;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.EmbeddedKafkaBroker;
import io.turnstream.runtime.GrouplessConsumer;
import io.turnstream.runtime.TenantClaims;
import io.turnstream.runtime.TopicAdmin;
import io.turnstream.runtime.TraceContext;
import io.turnstream.testsupport.UsesBroker;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * An owned partition's commit on a real broker, around a rebalance of the gateways' group that leaves the partition
 * with its owner (another member joins). Until the owner's consumer completes the rebalance in a later poll it only
 * knows the generation before it, and the group refuses an offset committed with that generation: what the owner's
 * turns wrote must commit all the same (else they are taken back and their steps called again), and the offset at
 * the next commit. A new owner's {@code initTransactions} still fences the partition.
 */
@UsesBroker
class OwnedPartitionRebalanceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String GROUP = "rebalance-keeps-partitions";
    private static final TopicPartition P0 = new TopicPartition(Topics.DEFAULTS.turnRequests(), 0);
    private static final TurnRequestRecord REQUEST = TurnRequestRecord.request("turn-1", "thread-1", "run-1", null,
            1, Json.MAPPER.createObjectNode().put("prompt", "hi"));

    private static EmbeddedKafkaBroker broker;
    private static Properties kafka;

    @BeforeAll
    static void startBroker() throws Exception {
        broker = EmbeddedKafkaBroker.onFreePort().start();
        kafka = new Properties();
        kafka.put("bootstrap.servers", broker.bootstrapServers());
        TopicAdmin.createAll(kafka, Topics.DEFAULTS, 1, (short) 1);
        try (Admin admin = Admin.create(kafka)) {
            admin.createTopics(List.of(new NewTopic("bystanders", 1, (short) 1))).all().get();
        }
    }

    @AfterAll
    static void stopBroker() {
        broker.close();
    }

    @Test
    void theTurnsWritesCommitWithTheGenerationBeforeARebalanceThatKeepsThePartitionAndTheOffsetAfterIt() {
        try (KafkaConsumer<String, byte[]> owner = member(Topics.DEFAULTS.turnRequests());
             OwnedPartition owned = ownedPartition()) {
            await().atMost(WAIT).until(() -> polled(owner).assignment().contains(P0));
            ConsumerGroupMetadata before = owner.groupMetadata();
            try (KafkaConsumer<String, byte[]> bystander = member("bystanders")) {
                await("the rebalance completes, the partition still the owner's").atMost(WAIT).until(() -> {
                    polled(bystander);
                    return polled(owner).groupMetadata().generationId() > before.generationId()
                            && owner.assignment().contains(P0) && bystander.assignment().size() == 1;
                });

                owned.publisherFor(REQUEST, TraceContext.fresh()).rawEvent("run-1", TraceContext.fresh(),
                        new StreamPayload.ResponseDone("run-1", ResponseStatus.COMPLETE, null, null));
                owned.commit(7, before);

                assertThat(committedRawEvents()).as("the turn's write is committed").isEqualTo(1);
                assertThat(owner.committed(Set.of(P0)).get(P0)).as("the offset is refused with the old generation")
                        .isNull();

                owned.commit(7, owner.groupMetadata());
                assertThat(owner.committed(Set.of(P0)).get(P0).offset()).isEqualTo(7);
            }
        }
    }

    @Test
    void aNewOwnersInitTransactionsStillFencesThePartition() {
        try (OwnedPartition first = ownedPartition()) {
            first.publisherFor(REQUEST, TraceContext.fresh()).rawEvent("run-1", TraceContext.fresh(),
                    new StreamPayload.ResponseDone("run-1", ResponseStatus.COMPLETE, null, null));
            try (OwnedPartition next = ownedPartition()) {
                assertThatThrownBy(() -> first.commit(8, new ConsumerGroupMetadata(GROUP)))
                        .isInstanceOf(KafkaException.class);
            }
        }
    }

    private static OwnedPartition ownedPartition() {
        Properties props = new Properties();
        props.putAll(kafka);
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, GROUP + "-turns-0");
        KafkaProducer<String, byte[]> producer = new KafkaProducer<>(props, new StringSerializer(),
                new ByteArraySerializer());
        return new OwnedPartition(P0, new OwnedPartition.TransactionalProducer(producer, () -> { }), Topics.DEFAULTS,
                WireFormat.JSON, TenantClaims.UNSIGNED, Clock.systemUTC());
    }

    /** A member of the gateways' group as the gateway's consumer is set up: cooperative, offsets not auto-committed. */
    private static KafkaConsumer<String, byte[]> member(String topic) {
        Properties props = new Properties();
        props.putAll(kafka);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, GROUP);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName());
        KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                new ByteArrayDeserializer());
        consumer.subscribe(List.of(topic));
        return consumer;
    }

    private static KafkaConsumer<String, byte[]> polled(KafkaConsumer<String, byte[]> consumer) {
        consumer.poll(Duration.ofMillis(100));
        return consumer;
    }

    private static int committedRawEvents() {
        List<Object> read = new ArrayList<>();
        try (GrouplessConsumer reads = new GrouplessConsumer("rebalance-test", kafka)) {
            reads.readToEnd(Map.of(new TopicPartition(Topics.DEFAULTS.rawEvents(), 0), 0L), WAIT, read::add);
        }
        return read.size();
    }
}
