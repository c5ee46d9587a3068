package io.turnstream.runtime;

import io.turnstream.schema.SchemaRegistryException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one way Turnstream follows topics without a consumer group: a {@link GrouplessConsumer} reads
 * every partition of some topics on one daemon thread (each instance sees everything) and hands each
 * record to a handler. It starts at the end (only what is written from now on), at the
 * beginning (a whole compacted topic) or at a moment in the past, and picks up partitions added later
 * from their beginning. The records of each poll are handed over in time order across partitions.
 *
 * <p>Failure policy, {@link GrouplessConsumer}'s for a reader that never ends:
 * <ul>
 *   <li>The topics must exist: a topic created a moment ago is waited for (up to {@link Builder#topicWait});
 *       one still missing then makes the constructor throw, so the owner fails to start with a clear message.</li>
 *   <li>Retriable client errors ({@link RetriableException}: broker unreachable, leader moving, timeouts) are
 *       retried with a growing backoff (up to {@link #MAX_BACKOFF}), logged once when they start and once when
 *       reading recovers.</li>
 *   <li>Any other failure is fatal: it is logged once, the reader stops, {@link #healthy()} turns false,
 *       {@link #failure()} and {@link #caughtUp()} carry the cause and the owner's
 *       {@link Builder#onFailure failure listener} is told.</li>
 *   <li>A handler that throws on a record (bad input) only skips that record, with a warning.</li>
 *   <li>A handler that fails on a record for what it depends on, not for the record (a schema registry that
 *       cannot be reached: {@code io.turnstream.schema.SchemaRegistryException} anywhere in what it throws, unless
 *       under an {@code UnreadableSchemaException}, which is the record's fault), skips
 *       nothing: the record, and what came after it in the poll, is read again after the same growing backoff,
 *       until the handler takes it. Meanwhile {@link #waitingFor()} says why and {@link #healthy()} is false;
 *       logged once when it starts and once when the record is taken.</li>
 * </ul>
 */
public final class TopicReader implements AutoCloseable {

    /** Where reading starts: {@link #BEGINNING}, {@link #END} or {@link #since} a moment. */
    public static final class Start {
        public static final Start BEGINNING = new Start(null);
        public static final Start END = new Start(null);
        private final Instant since;

        private Start(Instant since) {
            this.since = since;
        }

        /** At the first record written at or after {@code moment}; at the end where there is none. */
        public static Start since(Instant moment) {
            return new Start(Objects.requireNonNull(moment));
        }

        Instant since() {
            return since;
        }
    }

    /** Receives each record on the reader's thread. */
    @FunctionalInterface
    public interface Handler {
        /**
         * @param polledAtNanos {@link System#nanoTime()} when the poll that returned the record did: the
         *                      moment the record became visible to this reader
         */
        void handle(ConsumerRecord<String, byte[]> record, long polledAtNanos) throws Exception;
    }

    /** The longest pause between attempts while the cluster cannot be reached. */
    public static final Duration MAX_BACKOFF = Duration.ofSeconds(5);
    private static final Duration PARTITION_REFRESH = Duration.ofSeconds(30);
    private static final Logger LOG = LoggerFactory.getLogger(TopicReader.class);

    private final String name;
    private final List<String> topics;
    private final GrouplessConsumer reads;
    private final KafkaConsumer<String, byte[]> consumer;
    private final Handler handler;
    private final Consumer<Throwable> onFailure;
    private final Consumer<Map<TopicPartition, Long>> afterEachPoll;
    private final Map<TopicPartition, Long> endAtStart;
    private final CompletableFuture<Void> caughtUp = new CompletableFuture<>();
    private final CountDownLatch closing = new CountDownLatch(1);
    private final Thread thread;
    /** The consumer's open connections to brokers; its value may be read from any thread. */
    private final Metric connections;
    private volatile Throwable failure;
    /** Where each partition's record waits that a handler could not take for now, and why; null while none does. */
    private volatile GrouplessConsumer.NotHandledYet waiting;

    /**
     * Reads with the defaults: see {@link #reading} for the options.
     *
     * @param name names the thread and the client id, for logs
     * @param handler called on the reader's thread; an exception it throws is logged and the record skipped
     */
    public TopicReader(String name, Properties kafkaProperties, List<String> topics, Start start,
                       Consumer<ConsumerRecord<String, byte[]>> handler) {
        this(reading(name, kafkaProperties, topics).from(start), (record, polledAt) -> handler.accept(record));
    }

    /** A reader of {@code topics} named {@code name} (its thread and client id, for logs), to be configured and started. */
    public static Builder reading(String name, Properties kafkaProperties, List<String> topics) {
        return new Builder(name, kafkaProperties, topics);
    }

    /** The options of a reader; {@link #start} makes it. */
    public static final class Builder {
        private final String name;
        private final Properties kafkaProperties;
        private final List<String> topics;
        private Start start = Start.END;
        private Duration topicWait = Duration.ofSeconds(30);
        private Consumer<Throwable> onFailure = failure -> { };
        private Consumer<Map<TopicPartition, Long>> afterEachPoll;

        private Builder(String name, Properties kafkaProperties, List<String> topics) {
            this.name = name;
            this.kafkaProperties = kafkaProperties;
            this.topics = List.copyOf(topics);
        }

        /** Where reading starts; the end unless set. */
        public Builder from(Start start) {
            this.start = Objects.requireNonNull(start);
            return this;
        }

        /** How long a topic missing from the cluster's metadata is waited for at start; 30 s unless set. */
        public Builder topicWait(Duration topicWait) {
            this.topicWait = topicWait;
            return this;
        }

        /** Told, on the reader's thread, when a fatal failure stopped the reader. */
        public Builder onFailure(Consumer<Throwable> onFailure) {
            this.onFailure = Objects.requireNonNull(onFailure);
            return this;
        }

        /**
         * Told, on the reader's thread, after the records of each poll were handed to the handler, where the reader
         * reads every partition: every record before those positions was handed over (or skipped as bad input).
         */
        public Builder afterEachPoll(Consumer<Map<TopicPartition, Long>> positions) {
            this.afterEachPoll = Objects.requireNonNull(positions);
            return this;
        }

        /** Assigns the partitions, finds the start positions and starts reading. */
        public TopicReader start(Handler handler) {
            return new TopicReader(this, handler);
        }
    }

    private TopicReader(Builder options, Handler handler) {
        this.name = options.name;
        this.topics = options.topics;
        this.handler = handler;
        this.onFailure = options.onFailure;
        this.afterEachPoll = options.afterEachPoll;
        this.reads = new GrouplessConsumer(options.name, options.kafkaProperties);
        this.consumer = reads.consumer();
        try {
            Set<TopicPartition> partitions = reads.partitionsOf(topics, options.topicWait);
            consumer.assign(partitions);
            reads.offsets(partitions, options.start).forEach(consumer::seek);
            this.endAtStart = consumer.endOffsets(partitions);
        } catch (RuntimeException e) {
            reads.close();
            throw e;
        }
        this.connections = consumer.metrics().values().stream()
                .filter(metric -> metric.metricName().name().equals("connection-count")
                        && metric.metricName().group().equals("consumer-metrics"))
                .findFirst().orElse(null);
        this.thread = new Thread(this::run, name);
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /** Exports the reader's consumer metrics. */
    public void bindTo(ServiceMetrics metrics) {
        metrics.bind(consumer);
    }

    /**
     * Completes once everything that was in the topics when this reader was made has been handled;
     * exceptionally if the reader failed first.
     */
    public CompletableFuture<Void> caughtUp() {
        return caughtUp;
    }

    /**
     * True while the reader reads and is connected to a broker; false once it stopped or lost the cluster, and while
     * it waits to hand a record over again ({@link #waitingFor()}).
     */
    public boolean healthy() {
        return failure == null && waiting == null && closing.getCount() > 0 && thread.isAlive()
                && (connections == null || ((Number) connections.metricValue()).doubleValue() > 0);
    }

    /**
     * Why the reader reads a record again after a backoff, not yet handed over: its handler could not take it for
     * now (a schema registry that cannot be reached); empty while it reads on.
     */
    public Optional<SchemaRegistryException> waitingFor() {
        GrouplessConsumer.NotHandledYet notYet = waiting;
        return notYet == null ? Optional.empty() : Optional.of(notYet.registry());
    }

    /** What stopped the reader, or null while it reads (or after a normal close). */
    public Throwable failure() {
        return failure;
    }

    private void run() {
        long nextRefresh = System.nanoTime() + PARTITION_REFRESH.toNanos();
        Duration backoff = GrouplessConsumer.FIRST_BACKOFF;
        RetriableException retrying = null;
        try {
            while (closing.getCount() > 0) {
                try {
                    ConsumerRecords<String, byte[]> records = consumer.poll(GrouplessConsumer.POLL);
                    reads.handleInTimeOrder(records, System.nanoTime(), handler);
                    if (afterEachPoll != null) {
                        afterEachPoll.accept(reads.positions(consumer.assignment()));
                    }
                    if (waiting != null && handedOver(waiting)) {
                        LOG.info("{} took the record it read again: it reads {} on", name, topics);
                        waiting = null;
                        backoff = GrouplessConsumer.FIRST_BACKOFF;
                    }
                    if (!caughtUp.isDone() && reads.reached(endAtStart)) {
                        caughtUp.complete(null);
                    }
                    if (System.nanoTime() > nextRefresh) {
                        addNewPartitions();
                        nextRefresh = System.nanoTime() + PARTITION_REFRESH.toNanos();
                    }
                    if (retrying != null) {
                        LOG.info("{} reads {} again", name, topics);
                        retrying = null;
                        backoff = GrouplessConsumer.FIRST_BACKOFF;
                    }
                } catch (GrouplessConsumer.NotHandledYet notYet) {
                    // nothing skipped: the record and the poll's records after it are read again
                    notYet.from().forEach(consumer::seek);
                    if (waiting == null) {
                        LOG.warn("{} cannot take a record for now and reads again from {} after a backoff: {}", name,
                                notYet.from(), notYet.getMessage());
                    }
                    waiting = notYet;
                    pause(backoff);
                    backoff = longer(backoff);
                } catch (RetriableException e) {
                    if (retrying == null) {
                        LOG.warn("{} cannot read {} for now, retrying with backoff: {}", name, topics, e.toString());
                    }
                    retrying = e;
                    pause(backoff);
                    backoff = longer(backoff);
                }
            }
        } catch (WakeupException woken) {
            // close() woke us up
        } catch (RuntimeException | Error e) {
            fail(e);
        } finally {
            reads.close();
        }
    }

    private void fail(Throwable cause) {
        failure = cause;
        LOG.error("{} stopped reading {}", name, topics, cause);
        caughtUp.completeExceptionally(cause);
        try {
            onFailure.accept(cause);
        } catch (RuntimeException e) {
            LOG.warn("{}: the failure listener failed", name, e);
        }
    }

    /** Whether every partition that waited has read past the record it waited on. */
    private boolean handedOver(GrouplessConsumer.NotHandledYet notYet) {
        return notYet.from().entrySet().stream()
                .allMatch(at -> consumer.position(at.getKey(), GrouplessConsumer.POLL) > at.getValue());
    }

    /** Partitions added to the topics are read from their beginning; a topic missing now keeps what is assigned. */
    private void addNewPartitions() {
        Set<TopicPartition> all = new HashSet<>(consumer.assignment());
        for (String topic : topics) {
            reads.partitionsNow(topic, GrouplessConsumer.POLL).forEach(info -> all.add(new TopicPartition(topic, info.partition())));
        }
        List<TopicPartition> added = new ArrayList<>(all);
        added.removeAll(consumer.assignment());
        if (!added.isEmpty()) {
            consumer.assign(all);
            consumer.seekToBeginning(added);
            LOG.info("{} reads new partitions {}", name, added);
        }
    }

    /** Waits, but returns at once when the reader is closed. */
    private void pause(Duration backoff) {
        try {
            closing.await(backoff.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new WakeupException();
        }
    }

    static Duration longer(Duration backoff) {
        Duration doubled = backoff.multipliedBy(2);
        return doubled.compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : doubled;
    }

    @Override
    public void close() {
        closing.countDown();
        reads.wakeup();
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
