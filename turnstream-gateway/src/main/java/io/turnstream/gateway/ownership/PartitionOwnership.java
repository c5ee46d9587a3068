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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
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
        Properties props = new Properties();
        props.putAll(kafkaProperties);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, config.groupId());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName());
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, "turnstream-gateway-turns");
        // a dead gateway's partitions, and the turns they hold, move after 6 s instead of 45 s
        FailoverDefaults.groupMember(props);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        this.consumer = new KafkaConsumer<>(props);
        metrics.bind(consumer);
        this.partitions = new OwnedPartitions(topics, format, config, turns, new ConsumerLog(resumer),
                partition -> OwnedPartition.kafkaProducer(partition, kafkaProperties, config.groupId(), metrics), clock);
        this.thread = new Thread(this::run, "turn-ownership");
        this.thread.setDaemon(true);
        this.thread.start();
    }

    private void run() {
        try {
            consumer.subscribe(List.of(topics.turnRequests()), new Listener());
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

    /** The group consumer, and bounded reads of a partition for a takeover. */
    private final class ConsumerLog implements OwnedPartitions.GroupLog {
        private final TurnResumer resumer;

        ConsumerLog(TurnResumer resumer) {
            this.resumer = resumer;
        }

        @Override
        public long position(TopicPartition partition) {
            return consumer.position(partition);
        }

        @Override
        public ConsumerGroupMetadata groupMetadata() {
            return consumer.groupMetadata();
        }

        @Override
        public void seek(TopicPartition partition, long offset) {
            consumer.seek(partition, offset);
        }

        @Override
        public Map<TopicPartition, String> committedMetadata(Set<TopicPartition> partitions) {
            Map<TopicPartition, String> metadata = new HashMap<>();
            consumer.committed(partitions).forEach((partition, committed) ->
                    metadata.put(partition, committed == null ? "" : committed.metadata()));
            partitions.forEach(partition -> metadata.putIfAbsent(partition, ""));
            return metadata;
        }

        @Override
        public void rewind(TopicPartition partition) {
            OffsetAndMetadata committed = consumer.committed(Set.of(partition)).get(partition);
            if (committed != null) {
                consumer.seek(partition, committed.offset());
            } else {
                consumer.seekToBeginning(List.of(partition));
            }
        }

        @Override
        public void pause(TopicPartition partition) {
            consumer.pause(List.of(partition));
        }

        @Override
        public void resume(TopicPartition partition) {
            consumer.resume(List.of(partition));
        }

        @Override
        public Map<TopicPartition, List<ConsumerRecord<String, byte[]>>> readToEnd(Map<TopicPartition, Long> from) {
            return resumer.readToEnd(from);
        }

        @Override
        public TurnResumer.TurnLog turnsOf(List<TurnRequestRecord> resumed) {
            return resumer.turnsOf(resumed);
        }
    }

    private final class Listener implements ConsumerRebalanceListener {
        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> assigned) {
            if (!assigned.isEmpty()) {
                partitions.assigned(assigned);
            }
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> revoked) {
            Duration wait = running && config.rebalanceHandover().compareTo(config.drainTimeout()) < 0
                    ? config.rebalanceHandover() : config.drainTimeout();
            partitions.revoked(revoked, wait);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> lost) {
            partitions.lost(lost);
        }
    }
}
