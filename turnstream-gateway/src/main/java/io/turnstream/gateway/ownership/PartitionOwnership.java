package io.turnstream.gateway.ownership;

import io.turnstream.model.Topics;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.FailoverDefaults;
import io.turnstream.runtime.ServiceMetrics;
import io.turnstream.runtime.TraceContext;
import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which turns this gateway runs: the gateways form one consumer group on {@code llm.turn-requests},
 * and the owner of a partition runs the turns requested on it. When a partition is assigned, the
 * previous owner is fenced ({@link OwnedPartition}) and the partition is read from its committed
 * offset, so every turn that was accepted but has not finished is resumed from what Kafka holds;
 * after that, each new request starts a turn. When a partition leaves (this gateway stops, or the
 * group rebalances), its turns are asked to stop at their next step boundary and handed over: the
 * transaction is committed with the offset of the earliest unfinished request, which the next
 * owner reads from. All of it runs on one thread, the consumer's. This class is the Kafka shell:
 * what is decided is {@link OwnedPartitions}'.
 */
public final class PartitionOwnership implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(PartitionOwnership.class);

    /** Runs the turns of owned partitions. */
    public interface Turns {
        /**
         * Starts the turn of the request at {@code offset}; with {@code resume}, from what Kafka
         * holds of it (its step records are {@code steps}).
         */
        void run(TurnRequestRecord request, TraceContext trace, List<TurnRequestRecord> steps, boolean resume,
                 TurnPartition partition, long offset);

        /**
         * Ends the resumed turn of the request at {@code offset} at once with {@code turn_error}: a record Kafka
         * holds of it cannot be used ({@code why}); {@code steps} are its readable step records.
         */
        void endUnresumable(TurnRequestRecord request, TraceContext trace, List<TurnRequestRecord> steps,
                            TurnPartition partition, long offset, String why);
    }

    private final Topics topics;
    private final OwnershipConfig config;
    private final KafkaConsumer<String, byte[]> consumer;
    private final OwnedPartitions partitions;
    private final Thread thread;
    private volatile boolean running = true;

    public PartitionOwnership(Properties kafkaProperties, Topics topics, WireFormat format, OwnershipConfig config,
                  TurnResumer resumer, Turns turns, ServiceMetrics metrics, Clock clock) {
        this.topics = topics;
        this.config = config;
        this.consumer = new KafkaConsumer<>(memberProperties(kafkaProperties, config.groupId()));
        metrics.bind(consumer);
        this.partitions = new OwnedPartitions(topics, format, config, turns, new ConsumerGroupLog(consumer, resumer),
                partition -> OwnedPartition.kafkaProducer(partition, kafkaProperties, config.groupId(),
                        config.commitInterval(), metrics), clock);
        this.thread = new Thread(this::run, "turn-ownership");
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /** The group consumer's properties: a member of the gateways' group on {@code llm.turn-requests}. */
    static Properties memberProperties(Properties kafkaProperties, String groupId) {
        Properties props = new Properties();
        props.putAll(kafkaProperties);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName());
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, "turnstream-gateway-turns");
        // a dead gateway's partitions, and the turns they hold, move after 6 s instead of 45 s
        FailoverDefaults.groupMember(props);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        return props;
    }

    private void run() {
        try {
            // a rebalance waits for the turns it moves up to the handover time; a stopping gateway up to its drain
            consumer.subscribe(List.of(topics.turnRequests()), new Listener(partitions, () ->
                    running && config.rebalanceHandover().compareTo(config.drainTimeout()) < 0
                            ? config.rebalanceHandover() : config.drainTimeout()));
            while (running) {
                for (ConsumerRecord<String, byte[]> record : consumer.poll(config.commitInterval())) {
                    partitions.record(record);
                }
                partitions.retryDue();
                partitions.commitAll();
            }
            partitions.revokeAll(config.drainTimeout());
        } catch (RuntimeException e) {
            LOG.error("the gateway stopped taking turns from {}", topics.turnRequests(), e);
        } finally {
            consumer.close(Duration.ofSeconds(10));
        }
    }

    /**
     * Whether this gateway takes turns: false once its ownership loop died of an error, and while a
     * partition assigned to it waits for its takeover to be tried again.
     */
    public boolean healthy() {
        return !running || (thread.isAlive() && partitions.healthy());
    }

    /** The gateway stops: hands its turns over within the drain timeout and leaves the group. */
    @Override
    public void close() {
        running = false;
        try {
            thread.join(config.drainTimeout().plusSeconds(20).toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Tells the partitions what the group did; a revoked partition's turns get {@code handoverWait} to reach a boundary. */
    static final class Listener implements ConsumerRebalanceListener {
        private final OwnedPartitions partitions;
        private final Supplier<Duration> handoverWait;

        Listener(OwnedPartitions partitions, Supplier<Duration> handoverWait) {
            this.partitions = partitions;
            this.handoverWait = handoverWait;
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> assigned) {
            if (!assigned.isEmpty()) {
                partitions.assigned(assigned);
            }
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> revoked) {
            partitions.revoked(revoked, handoverWait.get());
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> lost) {
            partitions.lost(lost);
        }
    }
}
