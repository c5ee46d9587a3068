package io.turnstream.gateway.ownership;

import io.turnstream.model.Topics;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.ServiceMetrics;
import io.turnstream.runtime.TraceContext;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import io.turnstream.runtime.FailoverDefaults;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.FencedInstanceIdException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;
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
 * owner reads from. All of it runs on one thread, the consumer's.
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
                 OwnedPartition partition, long offset);
    }

    private final Properties kafkaProperties;
    private final Topics topics;
    private final WireFormat format;
    private final OwnershipConfig config;
    private final Turns turns;
    private final TurnResumer resumer;
    private final ServiceMetrics metrics;
    private final Clock clock;
    private final KafkaConsumer<String, byte[]> consumer;
    private final Map<TopicPartition, OwnedPartition> owned = new ConcurrentHashMap<>();
    private final Thread thread;
    private volatile boolean running = true;

    public PartitionOwnership(Properties kafkaProperties, Topics topics, WireFormat format, OwnershipConfig config,
                  TurnResumer resumer, Turns turns, ServiceMetrics metrics, Clock clock) {
        this.kafkaProperties = kafkaProperties;
        this.clock = clock;
        this.topics = topics;
        this.format = format;
        this.config = config;
        this.resumer = resumer;
        this.turns = turns;
        this.metrics = metrics;
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
        this.thread = new Thread(this::run, "turn-ownership");
        this.thread.setDaemon(true);
        this.thread.start();
    }

    private void run() {
        try {
            consumer.subscribe(List.of(topics.turnRequests()), new Listener());
            while (running) {
                for (ConsumerRecord<String, byte[]> record : consumer.poll(config.commitInterval())) {
                    onRecord(record);
                }
                commitAll();
            }
            handOver(List.copyOf(owned.keySet()), config.drainTimeout());
        } catch (RuntimeException e) {
            LOG.error("the gateway stopped taking turns from {}", topics.turnRequests(), e);
        } finally {
            consumer.close(Duration.ofSeconds(10));
        }
    }

    private void onRecord(ConsumerRecord<String, byte[]> record) {
        OwnedPartition partition = owned.get(new TopicPartition(record.topic(), record.partition()));
        TurnRequestRecord request = read(record);
        // step records on a partition this gateway owns are its own checkpoints
        if (partition != null && request != null && request.startsTurn()) {
            turns.run(request, traceOf(record), List.of(), false, partition, record.offset());
        }
    }

    /** The trace of the HTTP request that accepted the turn, carried in the record's headers. */
    private static TraceContext traceOf(ConsumerRecord<String, byte[]> record) {
        TraceContext trace = TraceContext.fromHeaders(record.headers());
        return trace != null ? trace : TraceContext.fresh();
    }

    private TurnRequestRecord read(ConsumerRecord<String, byte[]> record) {
        try {
            return format.read(record.topic(), record.value(), TurnRequestRecord.class);
        } catch (IOException | RuntimeException e) {
            LOG.warn("skipped an unreadable turn request at {}-{}@{}: {}", record.topic(), record.partition(),
                    record.offset(), e.getMessage());
            return null;
        }
    }

    private void commitAll() {
        for (Map.Entry<TopicPartition, OwnedPartition> entry : owned.entrySet()) {
            TopicPartition partition = entry.getKey();
            try {
                entry.getValue().commit(consumer.position(partition), consumer.groupMetadata());
            } catch (ProducerFencedException | InvalidProducerEpochException | FencedInstanceIdException fenced) {
                LOG.warn("another gateway owns {} now: {}", partition, fenced.getMessage());
                stopTurns(owned.remove(partition));
            } catch (KafkaException e) {
                // for instance a commit during a rebalance (CommitFailedException): the partition is
                // still ours, but what was sent since the last commit is aborted
                LOG.warn("cannot commit the turns of {} ({}); taking the partition over again from Kafka", partition,
                        e.getMessage());
                stopTurns(owned.remove(partition));
                OffsetAndMetadata committed = consumer.committed(Set.of(partition)).get(partition);
                if (committed != null) {
                    consumer.seek(partition, committed.offset());
                } else {
                    consumer.seekToBeginning(List.of(partition));
                }
                takeOver(List.of(partition));
            }
        }
    }

    /** Fences the previous owners, then resumes every unfinished turn of the partitions. */
    private void takeOver(Collection<TopicPartition> partitions) {
        for (TopicPartition partition : partitions) {
            owned.put(partition, new OwnedPartition(partition, kafkaProperties, config.groupId(), topics, format, metrics, clock));
        }
        for (TopicPartition partition : partitions) {
            catchUp(partition, owned.get(partition));
        }
    }

    /** Reads the partition from its committed offset to its end and resumes the turns not finished. */
    private void catchUp(TopicPartition partition, OwnedPartition owner) {
        long from = consumer.position(partition);
        record Accepted(TurnRequestRecord request, TraceContext trace) {
        }
        Map<Long, Accepted> requests = new LinkedHashMap<>();
        Map<String, List<TurnRequestRecord>> steps = new HashMap<>();
        long next = from;
        for (ConsumerRecord<String, byte[]> record : resumer.readToEnd(partition, from)) {
            next = record.offset() + 1;
            TurnRequestRecord read = read(record);
            if (read == null) {
                continue;
            }
            if (read.startsTurn()) {
                requests.put(record.offset(), new Accepted(read, traceOf(record)));
            } else {
                steps.computeIfAbsent(read.turnId(), id -> new ArrayList<>()).add(read);
            }
        }
        consumer.seek(partition, next);
        LOG.info("owning {} from offset {}: {} turn(s) to resume or check", partition, from, requests.size());
        requests.forEach((offset, accepted) -> turns.run(accepted.request(), accepted.trace(),
                steps.getOrDefault(accepted.request().turnId(), List.of()), true, owner, offset));
    }

    /**
     * Asks the partitions' turns to stop at their next step boundary, waits up to {@code timeout}
     * (committing meanwhile, so other partitions keep streaming), then commits and lets go. Turns
     * still inside a step then are stopped where they are and their uncommitted events aborted: the
     * next owner takes that step back.
     */
    private void handOver(Collection<TopicPartition> partitions, Duration timeout) {
        List<OwnedPartition> leaving = new ArrayList<>();
        for (TopicPartition partition : partitions) {
            OwnedPartition owner = owned.remove(partition);
            if (owner != null) {
                leaving.add(owner);
                owner.running().values().forEach(turn -> turn.handover.complete(null));
            }
        }
        if (leaving.isEmpty()) {
            return;
        }
        LOG.info("handing over {}", partitions);
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            while (leaving.stream().anyMatch(owner -> !owner.running().isEmpty()) && System.nanoTime() < deadline) {
                commitAll();
                for (OwnedPartition owner : leaving) {
                    owner.commit(consumer.position(owner.partition()), consumer.groupMetadata());
                }
                leaving.stream().filter(owner -> !owner.running().isEmpty()).findFirst()
                        .orElseThrow().awaitIdle(config.commitInterval());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (KafkaException e) {
            LOG.warn("cannot commit while handing over {}: {}", partitions, e.getMessage());
        }
        for (OwnedPartition owner : leaving) {
            try {
                if (owner.running().isEmpty()) {
                    owner.commit(consumer.position(owner.partition()), consumer.groupMetadata());
                } else {
                    LOG.warn("{} turn(s) of {} did not reach a step boundary in time; the next owner takes their "
                            + "step back", owner.running().size(), owner.partition());
                }
            } catch (KafkaException e) {
                LOG.warn("cannot commit {} while handing it over: {}", owner.partition(), e.getMessage());
            } finally {
                stopTurns(owner);
            }
        }
    }

    /** Stops a partition's turns at once, without a word on Kafka: the next owner resumes them. */
    private static void stopTurns(OwnedPartition owner) {
        if (owner == null) {
            return;
        }
        owner.abandon();
        owner.running().values().forEach(turn -> {
            turn.handover.complete(null);
            turn.cancel.cancel("handed over to another gateway");
        });
        owner.close();
    }

    /** Whether this gateway still takes turns: false once its ownership loop died of an error. */
    public boolean healthy() {
        return thread.isAlive() || !running;
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

    private final class Listener implements ConsumerRebalanceListener {
        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            if (!partitions.isEmpty()) {
                takeOver(partitions);
            }
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            Duration wait = running && config.rebalanceHandover().compareTo(config.drainTimeout()) < 0
                    ? config.rebalanceHandover() : config.drainTimeout();
            handOver(partitions, wait);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            partitions.forEach(partition -> stopTurns(owned.remove(partition)));
        }
    }
}
