package io.turnstream.runtime;

import io.turnstream.schema.SchemaRegistryException;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A consumer without a consumer group, set up the one way Turnstream reads topics without a group:
 * partitions are assigned, never subscribed; {@code read_committed}; nothing is committed; keys are
 * strings and values bytes. It finds a topic's partitions and where to start in them, and reads
 * partitions synchronously from given offsets up to end offsets fixed when the read starts.
 * {@link TopicReader} reads with one on a thread of its own.
 *
 * <p>Failure policy, the same for every reader without a group:
 * <ul>
 *   <li>A topic missing from the cluster's metadata is waited for up to the time given; still missing then,
 *       an {@link IllegalStateException} names it.</li>
 *   <li>A handler that throws on a record (bad input) only skips that record, with a warning naming its
 *       position.</li>
 *   <li>A handler that fails on a record for what it depends on, not for the record (a schema registry that cannot
 *       be reached: {@link SchemaRegistryException} anywhere in what it throws, {@link Failures#registryFailure}), skips
 *       nothing: a {@link #read} throws that exception, {@link TopicReader} reads the record again after a
 *       backoff.</li>
 *   <li>A read that has not reached its end within its time limit throws a {@link TimeoutException} naming
 *       the partitions and where it stopped; retriable client errors are retried until then.</li>
 *   <li>A position before a partition's first offset (deleted or compacted away) reads from its first offset.</li>
 * </ul>
 * Not thread-safe, like the {@link KafkaConsumer} it holds; {@link #close()} closes that consumer.
 */
public final class GrouplessConsumer implements AutoCloseable {

    /** Receives each record of a {@link #read}. */
    @FunctionalInterface
    public interface RecordHandler {
        void handle(ConsumerRecord<String, byte[]> record) throws Exception;
    }

    static final Duration FIRST_BACKOFF = Duration.ofMillis(100);
    static final Duration POLL = Duration.ofMillis(500);
    private static final Duration POLL_WHILE_READING = Duration.ofMillis(200);
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(5);
    private static final Logger LOG = LoggerFactory.getLogger(GrouplessConsumer.class);

    private final String name;
    private final KafkaConsumer<String, byte[]> consumer;

    /**
     * @param name the client id unless {@code kafkaProperties} has one, and the name in logs and errors
     * @param kafkaProperties the cluster's client properties; a group id in them is ignored
     */
    public GrouplessConsumer(String name, Properties kafkaProperties) {
        Properties props = new Properties();
        props.putAll(kafkaProperties);
        props.remove(ConsumerConfig.GROUP_ID_CONFIG);
        props.remove(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.putIfAbsent(ConsumerConfig.CLIENT_ID_CONFIG, name);
        props.putIfAbsent(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        this.name = name;
        this.consumer = new KafkaConsumer<>(props);
    }

    /** The consumer, for {@link TopicReader}'s loop. */
    KafkaConsumer<String, byte[]> consumer() {
        return consumer;
    }

    /**
     * Every partition of {@code topics}, waiting up to {@code wait} in all for topics not yet in the metadata
     * (one created a moment ago).
     *
     * @throws IllegalStateException naming the first topic still missing after {@code wait}
     */
    public Set<TopicPartition> partitionsOf(Collection<String> topics, Duration wait) {
        long deadline = System.nanoTime() + wait.toNanos();
        Set<TopicPartition> partitions = new HashSet<>();
        for (String topic : topics) {
            Duration backoff = FIRST_BACKOFF;
            List<PartitionInfo> infos = List.of();
            while (infos.isEmpty()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new IllegalStateException("topic " + topic + " does not exist; create the topics first "
                            + "(turnstream topics --bootstrap-servers ...)");
                }
                infos = partitionsNow(topic, Duration.ofNanos(left));
                if (infos.isEmpty()) {
                    pause(backoff);
                    backoff = TopicReader.longer(backoff);
                }
            }
            infos.forEach(info -> partitions.add(new TopicPartition(topic, info.partition())));
        }
        return partitions;
    }

    /** A topic's partitions, none when it is not (yet) in the metadata. */
    List<PartitionInfo> partitionsNow(String topic, Duration timeout) {
        try {
            List<PartitionInfo> infos = consumer.partitionsFor(topic, timeout);
            return infos == null ? List.of() : infos;
        } catch (TimeoutException missingOrUnreachable) {
            return List.of();
        }
    }

    /**
     * Where reading from {@code start} begins in each partition: the end where nothing was written since a moment.
     *
     * @throws TimeoutException naming the partitions when the cluster does not answer in time
     */
    public Map<TopicPartition, Long> offsets(Collection<TopicPartition> partitions, TopicReader.Start start) {
        if (start == TopicReader.Start.BEGINNING) {
            return lookUp("the beginning", partitions, () -> consumer.beginningOffsets(partitions));
        }
        Map<TopicPartition, Long> end = lookUp("the end", partitions, () -> consumer.endOffsets(partitions));
        if (start == TopicReader.Start.END) {
            return end;
        }
        Map<TopicPartition, Long> at = new HashMap<>();
        partitions.forEach(partition -> at.put(partition, start.since().toEpochMilli()));
        Map<TopicPartition, OffsetAndTimestamp> found = lookUp("the records since " + start.since(), partitions,
                () -> consumer.offsetsForTimes(at));
        Map<TopicPartition, Long> offsets = new HashMap<>();
        for (TopicPartition partition : partitions) {
            OffsetAndTimestamp offset = found.get(partition);
            offsets.put(partition, offset == null ? end.get(partition) : offset.offset());
        }
        return offsets;
    }

    /**
     * Reads {@code from} each partition's offset up to its end now: the end of what is committed
     * (records of transactions still open are not waited for).
     *
     * @see #read
     */
    public void readToEnd(Map<TopicPartition, Long> from, Duration limit, RecordHandler handler) {
        read(from, lookUp("the end", from.keySet(), () -> consumer.endOffsets(from.keySet(), limit)), limit, handler);
    }

    /**
     * Reads each partition {@code from} an offset up to (not including) its offset in {@code until}, handing
     * each record to {@code handler}, and returns once every partition got there. An {@code until} beyond
     * what is committed (a high watermark) waits for the transactions open below it to resolve: what they
     * committed is read, what they aborted is not.
     *
     * @throws TimeoutException when the read has not got there within {@code limit}; the records read so far
     *                          were handed over
     */
    public void read(Map<TopicPartition, Long> from, Map<TopicPartition, Long> until, Duration limit,
                     RecordHandler handler) {
        long deadline = System.nanoTime() + limit.toNanos();
        consumer.assign(from.keySet());
        from.forEach(consumer::seek);
        TopicReader.Handler upToTheEnd = (record, polledAt) -> {
            if (record.offset() < until.get(new TopicPartition(record.topic(), record.partition()))) {
                handler.handle(record);
            }
        };
        try {
            while (!reachedRetrying(until)) {
                if (System.nanoTime() - deadline > 0) {
                    throw new TimeoutException(name + " could not read " + describe(from.keySet()) + " to offsets "
                            + until + " within " + limit + "; it got to " + positions(from.keySet()));
                }
                handleInTimeOrder(consumer.poll(POLL_WHILE_READING), System.nanoTime(), upToTheEnd);
            }
        } catch (NotHandledYet notNow) {
            throw notNow.registry();
        } finally {
            consumer.unsubscribe();
        }
    }

    /** True when every partition's position is at or past its offset in {@code ends}. */
    boolean reached(Map<TopicPartition, Long> ends) {
        return ends.entrySet().stream().allMatch(end -> consumer.position(end.getKey(), POLL) >= end.getValue());
    }

    private boolean reachedRetrying(Map<TopicPartition, Long> ends) {
        try {
            return reached(ends);
        } catch (RetriableException notNow) {
            return false;
        }
    }

    /**
     * A record a handler could not take for now: what it depends on failed ({@link #registry}), not the record. The
     * records of the poll from it on were not handed over: {@link #from} is where each partition's first of them is.
     */
    static final class NotHandledYet extends RuntimeException {
        private final transient Map<TopicPartition, Long> from;
        private final SchemaRegistryException registry;

        NotHandledYet(Map<TopicPartition, Long> from, SchemaRegistryException registry) {
            super(registry.getMessage(), registry);
            this.from = Map.copyOf(from);
            this.registry = registry;
        }

        /** Where reading must start again in each partition of the poll whose records were not all handed over. */
        Map<TopicPartition, Long> from() {
            return from;
        }

        /** Why: the schema registry's state. */
        SchemaRegistryException registry() {
            return registry;
        }
    }

    /**
     * Hands over a poll's records oldest first across partitions, each partition in its own order, so
     * records of several topics written together (an upsert and the append beside it) arrive as written
     * rather than one partition's batch after another's.
     *
     * @throws NotHandledYet when the handler could not take a record for now: it and the records after it were not
     *                       handed over
     */
    void handleInTimeOrder(ConsumerRecords<String, byte[]> records, long polledAtNanos, TopicReader.Handler handler) {
        List<List<ConsumerRecord<String, byte[]>>> partitions = records.partitions().stream().map(records::records)
                .toList();
        int[] next = new int[partitions.size()];
        while (true) {
            int oldest = -1;
            for (int i = 0; i < partitions.size(); i++) {
                if (next[i] < partitions.get(i).size() && (oldest < 0 || partitions.get(i).get(next[i]).timestamp()
                        < partitions.get(oldest).get(next[oldest]).timestamp())) {
                    oldest = i;
                }
            }
            if (oldest < 0) {
                return;
            }
            SchemaRegistryException notNow = handle(partitions.get(oldest).get(next[oldest]), polledAtNanos, handler);
            if (notNow != null) {
                Map<TopicPartition, Long> from = new LinkedHashMap<>();
                for (int i = 0; i < partitions.size(); i++) {
                    if (next[i] < partitions.get(i).size()) {
                        ConsumerRecord<String, byte[]> first = partitions.get(i).get(next[i]);
                        from.put(new TopicPartition(first.topic(), first.partition()), first.offset());
                    }
                }
                throw new NotHandledYet(from, notNow);
            }
            next[oldest]++;
        }
    }

    /**
     * @return the schema registry's failure when the handler could not take the record for now (not handed over);
     *         null when it took it, or threw on it and it is skipped
     */
    private SchemaRegistryException handle(ConsumerRecord<String, byte[]> record, long polledAtNanos,
                                           TopicReader.Handler handler) {
        try {
            handler.handle(record, polledAtNanos);
            return null;
        } catch (Exception e) {
            SchemaRegistryException registry = Failures.registryFailure(e);
            if (registry != null) {
                return registry;
            }
            LOG.warn("{} skipped an unreadable record at {}-{}@{}: {}", name, record.topic(), record.partition(),
                    record.offset(), e.getMessage());
            return null;
        }
    }

    private <T> T lookUp(String what, Collection<TopicPartition> partitions, Supplier<T> lookUp) {
        try {
            return lookUp.get();
        } catch (TimeoutException e) {
            throw new TimeoutException(name + " could not find " + what + " of " + describe(partitions), e);
        }
    }

    /** Where the consumer reads each partition; a partition whose position cannot be found now is left out. */
    Map<TopicPartition, Long> positions(Collection<TopicPartition> partitions) {
        Map<TopicPartition, Long> positions = new HashMap<>();
        for (TopicPartition partition : partitions) {
            try {
                positions.put(partition, consumer.position(partition, POLL));
            } catch (RetriableException unknown) {
                // left out: the message says where the others got
            }
        }
        return positions;
    }

    private static String describe(Collection<TopicPartition> partitions) {
        return partitions.stream().map(TopicPartition::toString).sorted().collect(Collectors.joining(", "));
    }

    private static void pause(Duration backoff) {
        try {
            Thread.sleep(backoff.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptException(e);
        }
    }

    /** Wakes up a {@link KafkaConsumer#poll} in progress on another thread. */
    void wakeup() {
        consumer.wakeup();
    }

    @Override
    public void close() {
        consumer.close(CLOSE_TIMEOUT);
    }
}
