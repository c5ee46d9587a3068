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
import io.turnstream.runtime.ContractBroker;
import io.turnstream.runtime.GrouplessConsumer;
import io.turnstream.runtime.TenantClaims;
import io.turnstream.runtime.TraceContext;
import io.turnstream.testsupport.UsesBroker;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
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
 *
 * <p>And two gateways that both believe they own the partition: gateway A stops polling (a long pause) until its
 * consumer leaves the group, the group gives the partition to gateway B, and B's takeover fences A. A, awake again and
 * not polled yet, commits: fenced. It lets the partition go instead of taking it over again, which would fence B, whose
 * next commit would fail and take it back, to and fro until A's consumer learned of the loss. Each gateway runs its
 * ownership loop's steps (poll, retry what is due, commit) as {@code PartitionOwnership} does, driven by the test.
 */
@UsesBroker
class OwnedPartitionRebalanceTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String GROUP = "rebalance-keeps-partitions";
    private static final String TWO_OWNERS = "two-owners";
    private static final TopicPartition P0 = new TopicPartition(Topics.DEFAULTS.turnRequests(), 0);
    private static final TurnRequestRecord REQUEST = TurnRequestRecord.request("turn-1", "thread-1", "run-1", null,
            1, Json.MAPPER.createObjectNode().put("prompt", "hi"));

    private static ContractBroker broker;
    private static Properties kafka;

    @BeforeAll
    static void startBroker() throws Exception {
        broker = ContractBroker.start(1);
        kafka = broker.clientProperties();
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

                int committedBefore = committedRawEvents();
                owned.publisherFor(REQUEST, TraceContext.fresh()).rawEvent("run-1", TraceContext.fresh(),
                        new StreamPayload.ResponseDone("run-1", ResponseStatus.COMPLETE, null, null));
                owned.commit(7, before);

                assertThat(committedRawEvents()).as("the turn's write is committed").isEqualTo(committedBefore + 1);
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

    @Test
    void aGatewayFencedByTheOwnerTheGroupChoseLetsThePartitionGoAndNeverFencesItBack() {
        // A's consumer leaves the group 3 s after its last poll (its heartbeat thread says so): the pause
        try (Member a = new Member("a", Duration.ofSeconds(3)); Member b = new Member("b", Duration.ofMinutes(5))) {
            await("A owns the partition").atMost(WAIT).until(() -> a.polled().partitions.owned().contains(P0));
            int committedBefore = committedRawEvents();
            a.publish();

            await("B is given the partition and fences A").atMost(WAIT)
                    .until(() -> b.polled().partitions.owned().contains(P0));

            a.partitions.commitAll();
            assertThat(a.partitions.owned()).as("A lets it go").isEmpty();
            assertThat(a.opened).as("A does not take it over again at once").hasValue(1);

            b.publish();
            b.partitions.commitAll();
            assertThat(b.partitions.owned()).as("B's commit goes through: B is not fenced").containsExactly(P0);
            assertThat(committedRawEvents()).as("B's write committed, A's aborted by B's takeover")
                    .isEqualTo(committedBefore + 1);

            await("A's consumer learns the partition is lost").atMost(WAIT).until(() -> {
                b.loop();
                a.loop();
                return a.partitions.retrying().isEmpty() && a.consumer.assignment().isEmpty();
            });
            a.clock.advance(OwnedPartitions.MAX_RETRY_BACKOFF);
            a.loop();
            b.loop();

            assertThat(a.opened).as("A never fenced B").hasValue(1);
            assertThat(b.opened).as("B took the partition over once").hasValue(1);
            assertThat(b.partitions.owned()).containsExactly(P0);
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

    /** A gateway's ownership: its group member, its partitions, its producers (counted), on a clock of its own. */
    private static final class Member implements AutoCloseable {
        final KafkaConsumer<String, byte[]> consumer;
        final OwnedPartitions partitions;
        final ManualClock clock = new ManualClock(1_000_000);
        final AtomicInteger opened = new AtomicInteger();
        private final TurnResumer resumer = new TurnResumer(kafka, Topics.DEFAULTS, WireFormat.JSON);

        Member(String name, Duration maxPollInterval) {
            Properties props = PartitionOwnership.memberProperties(kafka, TWO_OWNERS);
            props.put(ConsumerConfig.CLIENT_ID_CONFIG, "gateway-" + name);
            props.put(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, String.valueOf(maxPollInterval.toMillis()));
            consumer = new KafkaConsumer<>(props);
            OwnershipConfig config = new OwnershipConfig(TWO_OWNERS, Duration.ofMillis(100), Duration.ofSeconds(5),
                    Duration.ofSeconds(5), TenantClaims.UNSIGNED);
            partitions = new OwnedPartitions(Topics.DEFAULTS, WireFormat.JSON, config, new NoTurns(), new ConsumerGroupLog(consumer, resumer),
                    partition -> {
                        opened.incrementAndGet();
                        Properties producer = new Properties();
                        producer.putAll(kafka);
                        producer.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, TWO_OWNERS + "-turns-" + partition.partition());
                        producer.put(ProducerConfig.CLIENT_ID_CONFIG, "gateway-" + name + "-turns");
                        return new OwnedPartition.TransactionalProducer(new KafkaProducer<>(producer,
                                new StringSerializer(), new ByteArraySerializer()), () -> { });
                    }, clock);
            consumer.subscribe(List.of(Topics.DEFAULTS.turnRequests()),
                    new PartitionOwnership.Listener(partitions, () -> Duration.ofSeconds(5)));
        }

        Member polled() {
            consumer.poll(Duration.ofMillis(100)).forEach(partitions::record);
            return this;
        }

        /** One turn of the ownership loop. */
        void loop() {
            polled();
            partitions.retryDue();
            partitions.commitAll();
        }

        /** A turn of the partition writes a raw event, in the open transaction. */
        void publish() {
            partitions.owner(P0).publisherFor(REQUEST, TraceContext.fresh()).rawEvent("run-1", TraceContext.fresh(),
                    new StreamPayload.ResponseDone("run-1", ResponseStatus.COMPLETE, null, null));
        }

        @Override
        public void close() {
            partitions.lost(partitions.owned());
            consumer.close(Duration.ofSeconds(5));
            resumer.close();
        }
    }

    /** The partition holds no request: no turn runs. */
    private static final class NoTurns implements PartitionOwnership.Turns {
        @Override
        public void run(TurnRequestRecord request, TraceContext trace, List<TurnRequestRecord> steps, boolean resume,
                        TurnPartition partition, long offset) {
            throw new AssertionError("no request was written");
        }

        @Override
        public void endUnresumable(TurnRequestRecord request, TraceContext trace, List<TurnRequestRecord> steps,
                                   TurnPartition partition, long offset, String why) {
            throw new AssertionError("no request was written");
        }
    }
}
