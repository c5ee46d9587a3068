package io.turnstream.gateway.ownership;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.gateway.loop.TurnPublisher;
import io.turnstream.gateway.loop.TurnRegistry;
import io.turnstream.model.ControlMessage;
import io.turnstream.model.DeadLetterHeaders;
import io.turnstream.model.ItemType;
import io.turnstream.model.ScopedIds;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.Topics;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.FailoverDefaults;
import io.turnstream.runtime.SendCompletions;
import io.turnstream.runtime.ServiceMetrics;
import io.turnstream.runtime.TenantClaims;
import io.turnstream.runtime.TraceContext;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.IllegalGenerationException;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.UnknownMemberIdException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A partition of {@code llm.turn-requests} this gateway owns, the turns it runs for it, and the
 * transactional producer those turns write with. The transactional id is the group id plus the
 * partition number, so the next owner's {@code initTransactions} fences this one (its later sends
 * and commits fail) and aborts whatever it left uncommitted: read_committed readers (the topology,
 * the next owner) never see a write of an owner that lost the partition. The turns' sends share
 * the open transaction; the ownership loop commits it every commit interval, then the partition's
 * group offset (the earliest request whose turn has not finished here) in a transaction of its own.
 */
public final class OwnedPartition implements TurnPartition, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(OwnedPartition.class);

    /** The committed group offset's metadata: {@code dead-lettered-before=<offset>}. */
    private static final String DEAD_LETTERED_BEFORE = "dead-lettered-before=";

    private final TopicPartition partition;
    private final Topics topics;
    private final WireFormat format;
    private final TenantClaims claims;
    private final Clock clock;
    private final Producer<String, byte[]> producer;
    private final AutoCloseable producerMetrics;
    /** Completes the sends' futures off Kafka's I/O thread: what a turn chains on them may send again. */
    private final SendCompletions completions;
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    /** Offsets of the requests whose turns have not finished, to the turn id. */
    private final ConcurrentSkipListMap<Long, String> unfinished = new ConcurrentSkipListMap<>();
    private final Map<String, TurnRegistry.ActiveTurn> running = new ConcurrentHashMap<>();
    /** The turns that released a call to the tool executor in the open transaction. */
    private final Map<String, TurnRegistry.ActiveTurn> releasing = new ConcurrentHashMap<>();
    private volatile TurnHistory resumed;
    /**
     * Set when a turn could not write its end, or cannot run now: the open transaction must not commit (see
     * {@link #commit}).
     */
    private volatile LetGo letGo;
    private boolean inTransaction;
    private volatile boolean closed;
    private long committedOffset = -1;
    /**
     * Records before this offset were dead-lettered where unusable, in this owner's open transaction or committed
     * before. Read and written on the ownership thread only (dead letters and commits).
     */
    private long deadLetteredBefore;
    /** Dead letters not committed yet: they commit with the group offset whose metadata counts them. */
    private final List<ProducerRecord<String, byte[]>> deadLetters = new ArrayList<>();

    /**
     * Fences the previous owner: returns once its open transaction is aborted. On failure (for
     * instance {@code InitProducerId} timing out while the transaction coordinator moves) the
     * producer is closed and the error thrown: the partition's takeover is retried.
     */
    OwnedPartition(TopicPartition partition, TransactionalProducer opened, Topics topics, WireFormat format,
                   TenantClaims claims, Clock clock) {
        this.partition = partition;
        this.claims = claims;
        this.clock = clock;
        this.topics = topics;
        this.format = format;
        this.producer = opened.producer();
        this.producerMetrics = opened.meters();
        this.completions = new SendCompletions("turnstream-gateway-turns-" + partition.partition() + "-sent");
        try {
            producer.initTransactions();
        } catch (RuntimeException e) {
            closeQuietly();
            throw e;
        }
    }

    /** A partition's transactional producer, not yet initialised, and the meters bound to it. */
    public record TransactionalProducer(Producer<String, byte[]> producer, AutoCloseable meters) {
    }

    /**
     * The Kafka producer of a partition's turns: its transactional id is the group id plus the
     * partition number, so each owner fences the one before.
     *
     * @param commitInterval how often the ownership loop commits: the producer's default {@code linger.ms}
     */
    static TransactionalProducer kafkaProducer(TopicPartition partition, Properties kafkaProperties, String groupId,
                                               Duration commitInterval, ServiceMetrics metrics) {
        KafkaProducer<String, byte[]> producer = new KafkaProducer<>(producerProperties(partition, kafkaProperties,
                groupId, commitInterval));
        return new TransactionalProducer(producer, metrics.bind(producer));
    }

    /**
     * The turn producer's settings. It lingers a commit interval unless {@code linger.ms} is configured: a
     * read_committed reader (the topology, a next owner) sees nothing of a transaction before its commit, and the
     * commit flushes what lingers, so sending sooner only splits a transaction's writes into more requests. At Kafka's
     * 5 ms a fault run's gateway spent a quarter of its CPU on its turn producers' I/O threads, and the next
     * transaction's first sends, made while the brokers still wrote the last commit's markers, were refused with
     * {@code CONCURRENT_TRANSACTIONS} and retried after a backoff (docs/benchmarks.md, "The gateways' CPU"). Kafka
     * Streams lingers 100 ms under exactly-once for the same reason.
     */
    static Properties producerProperties(TopicPartition partition, Properties kafkaProperties, String groupId,
                                         Duration commitInterval) {
        Properties props = new Properties();
        props.putAll(kafkaProperties);
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, groupId + "-turns-" + partition.partition());
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.putIfAbsent(ProducerConfig.LINGER_MS_CONFIG, String.valueOf(commitInterval.toMillis()));
        // what a dead owner left open blocks read_committed readers until it is fenced or times out
        FailoverDefaults.fencedTransactionalProducer(props);
        props.put(ProducerConfig.CLIENT_ID_CONFIG, "turnstream-gateway-turns-" + partition.partition());
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return props;
    }

    TopicPartition partition() {
        return partition;
    }

    /** What the takeover read of the turns it resumes. */
    void resuming(TurnHistory history) {
        this.resumed = history;
    }

    @Override
    public TurnHistory history() {
        if (resumed == null) {
            throw new IllegalStateException("the takeover of " + partition + " resumed no turn");
        }
        return resumed;
    }

    @Override
    public TurnPublisher publisherFor(TurnRequestRecord request, TraceContext trace) {
        return new TurnPublisher() {
            @Override
            public Clock clock() {
                return clock;
            }

            @Override
            public CompletableFuture<Void> rawEvent(String runId, TraceContext trace, StreamPayload payload) {
                StreamEvent event = new StreamEvent(UUID.randomUUID().toString(), clock.millis(),
                        trace.toJson(), runId, payload.type(), payload);
                ProducerRecord<String, byte[]> record = new ProducerRecord<>(topics.rawEvents(), runId,
                        format.write(topics.rawEvents(), event));
                trace.addTo(record.headers());
                if (payload instanceof StreamPayload.ResponseStart start) {
                    claims.addTo(record.headers(), start.tenantId(), runId);
                }
                if (!releases(payload)) {
                    return send(record);
                }
                // noted and sent in the same transaction: the commit takes the write lock
                lock.readLock().lock();
                try {
                    TurnRegistry.ActiveTurn turn = running.get(request.turnId());
                    if (turn != null) {
                        releasing.put(request.turnId(), turn);
                    }
                    return send(record);
                } finally {
                    lock.readLock().unlock();
                }
            }

            /** The commit takes the write lock: it waits until the writes are all in the open transaction. */
            @Override
            public void atomically(Runnable writes) {
                lock.readLock().lock();
                try {
                    writes.run();
                } finally {
                    lock.readLock().unlock();
                }
            }

            @Override
            public void failTransaction(Throwable why) {
                letGo = new TurnEndNotWritten(request.turnId(), why);
            }

            @Override
            public CompletableFuture<Void> control(ControlMessage message) {
                ProducerRecord<String, byte[]> record = new ProducerRecord<>(topics.control(), message.turnId(),
                        format.write(topics.control(), message));
                trace.addTo(record.headers());
                return send(record);
            }

            @Override
            public CompletableFuture<Void> stepDone(int step, JsonNode checkpoint) {
                ProducerRecord<String, byte[]> record = new ProducerRecord<>(topics.turnRequests(),
                        partition.partition(), ScopedIds.threadKey(request.tenantId(), request.threadId()),
                        format.write(topics.turnRequests(), request.stepDone(step, checkpoint)));
                trace.addTo(record.headers());
                return send(record);
            }
        };
    }

    /**
     * Sends a record of the partition that cannot be used to the dead-letter topic, as it was, with why and where it
     * was read, in the transaction that commits the partition's group offset: that offset's metadata then says that
     * the records before it were dead-lettered. A next owner that reads the partition from before it again (the
     * offset stays at the earliest unfinished request) does not send it again. Called on the ownership thread.
     *
     * @return false when it was dead-lettered before
     */
    boolean deadLetter(ConsumerRecord<String, byte[]> unusable, String reason) {
        if (unusable.offset() < deadLetteredBefore) {
            return false;
        }
        ProducerRecord<String, byte[]> record = new ProducerRecord<>(topics.deadLetters(), unusable.key(),
                unusable.value());
        record.headers().add(DeadLetterHeaders.REASON, reason.getBytes(StandardCharsets.UTF_8));
        record.headers().add(DeadLetterHeaders.SOURCE, (unusable.topic() + "-" + unusable.partition() + "@"
                + unusable.offset()).getBytes(StandardCharsets.UTF_8));
        deadLetters.add(record);
        deadLetteredBefore = unusable.offset() + 1;
        return true;
    }

    /**
     * Takes over what the partition's committed group offset says of its dead letters (its metadata, read once the
     * previous owner is fenced): the records before that offset are not dead-lettered again. Metadata of another
     * form (committed by an older gateway) says nothing.
     */
    void committedMetadata(String metadata) {
        long before = 0;
        if (metadata != null && metadata.startsWith(DEAD_LETTERED_BEFORE)) {
            try {
                before = Long.parseLong(metadata.substring(DEAD_LETTERED_BEFORE.length()));
            } catch (NumberFormatException notOurs) {
                before = 0;
            }
        }
        deadLetteredBefore = before;
    }

    @Override
    public void started(long offset, TurnRegistry.ActiveTurn turn) {
        unfinished.put(offset, turn.status.turnId());
        running.put(turn.status.turnId(), turn);
    }

    /** A request whose turn had already finished before this gateway owned the partition. */
    public void alreadyFinished(long offset) {
        unfinished.remove(offset);
    }

    @Override
    public void cannotRunNow(String turnId, RuntimeException why) {
        letGo = new TurnCannotRunNow(turnId, why);
    }

    @Override
    public void stopped(long offset, String turnId, boolean handedOver) {
        if (!handedOver) {
            unfinished.remove(offset);
        }
        synchronized (running) {
            running.remove(turnId);
            running.notifyAll();
        }
    }

    /**
     * Waits up to {@code timeout} (by the injected clock) for every turn to stop; returns whether
     * they did. Turns stopping wake it at once.
     */
    boolean awaitIdle(Duration timeout) throws InterruptedException {
        long deadline = clock.millis() + timeout.toMillis();
        synchronized (running) {
            while (!running.isEmpty()) {
                long left = deadline - clock.millis();
                if (left <= 0) {
                    return false;
                }
                running.wait(left);
            }
            return true;
        }
    }

    /** Turns running here, for handing them over. */
    Map<String, TurnRegistry.ActiveTurn> running() {
        return Map.copyOf(running);
    }

    private CompletableFuture<Void> send(ProducerRecord<String, byte[]> record) {
        CompletableFuture<Void> sent = new CompletableFuture<>();
        lock.readLock().lock();
        try {
            if (closed) {
                throw new IllegalStateException("partition " + partition + " is no longer owned by this gateway");
            }
            beginIfNeeded();
            producer.send(record, (metadata, error) -> completions.complete(sent, error));
        } catch (RuntimeException e) {
            sent.completeExceptionally(e);
        } finally {
            lock.readLock().unlock();
        }
        return sent;
    }

    private synchronized void beginIfNeeded() {
        if (!inTransaction) {
            producer.beginTransaction();
            inTransaction = true;
        }
    }

    /**
     * Whether a raw event releases a call to the tool executor: a function call's {@code item_done}, which the
     * topology routes to {@code llm.tool-calls}.
     */
    public static boolean releases(StreamPayload payload) {
        return payload instanceof StreamPayload.ItemDone done && done.finalItem() != null
                && done.finalItem().knownType() == ItemType.FUNCTION_CALL;
    }

    /**
     * Commits what the turns sent since the last commit, then the group offset: the earliest request whose turn has
     * not finished, else {@code position}. Called on the ownership thread.
     *
     * <p>The offset commits in a transaction of its own, after the turns' writes, with the dead letters it counts:
     * the group checks its generation on every offset commit, and refuses one made with the generation before a
     * rebalance even when the rebalance leaves the partition here (the consumer learns the new generation only when
     * the rebalance completes inside a later poll). A refused offset commit aborts only that transaction: the turns'
     * writes are already committed, so they are not taken back and no model call is made again; the offset is
     * committed at the next commit. A turn's end commits before the offset that passes its request, so a next owner
     * reads at worst a finished request again (and finds it ended). Fencing is the transactional id's: a new owner's
     * {@code initTransactions} still makes every later commit here fail.
     *
     * <p>A transaction in which a turn released a call and that turn has been cancelled since is not committed: the
     * tool executor sees a release when it commits, so committed after the cancel was accepted it would run a call
     * the user stopped. It is refused instead, and the partition taken over again from Kafka (as after any commit
     * that fails), where the cancel is on {@code llm.control}: the turn ends {@code aborted} with the call never
     * released. The release and the cancel's effect are so ordered by commit.
     *
     * <p>Nor is a transaction in which a turn could not write its end ({@link TurnPublisher#failTransaction}): committed
     * without it, the turn would stay unended in Kafka, its request passed by the group offset. Refused, the partition
     * is taken over again from what was committed, and the turn goes on there. Nor, alike, one of a partition with a
     * turn that cannot run now ({@link #cannotRunNow}).
     *
     * @return whether it committed writes of the turns (a step's events, a step record, a turn's end): the partition's
     *         progress
     * @throws KafkaException when the turns' writes cannot commit (for instance: fenced by a new owner), hold a
     *                        release of a turn cancelled since ({@link ReleaseOfACancelledTurn}), lack a turn's end
     *                        ({@link TurnEndNotWritten}) or hold a turn that cannot run now ({@link TurnCannotRunNow})
     */
    boolean commit(long position, ConsumerGroupMetadata group) {
        long offset = unfinished.isEmpty() ? position : unfinished.firstKey();
        lock.writeLock().lock();
        try {
            if (closed) {
                return false;
            }
            if (letGo != null) {
                throw letGo;
            }
            boolean wrote = inTransaction;
            if (wrote) {
                for (Map.Entry<String, TurnRegistry.ActiveTurn> released : releasing.entrySet()) {
                    if (released.getValue().cancel.isCancelled()) {
                        throw new ReleaseOfACancelledTurn(released.getKey(), released.getValue().cancel.reason());
                    }
                }
                producer.commitTransaction();
                inTransaction = false;
                releasing.clear();
            }
            if (offset != committedOffset || !deadLetters.isEmpty()) {
                commitOffset(offset, group);
            }
            return wrote;
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** The group offset and the dead letters it counts, in a transaction of their own (under the write lock). */
    private void commitOffset(long offset, ConsumerGroupMetadata group) {
        long deadLettered = deadLetteredBefore;
        producer.beginTransaction();
        try {
            deadLetters.forEach(record -> producer.send(record));
            producer.sendOffsetsToTransaction(Map.of(partition, new OffsetAndMetadata(offset,
                    DEAD_LETTERED_BEFORE + deadLettered)), group);
            producer.commitTransaction();
        } catch (CommitFailedException | RebalanceInProgressException | IllegalGenerationException
                 | UnknownMemberIdException refusedByTheGroup) {
            producer.abortTransaction();
            LOG.info("the group refused the offset of {} ({}); committing it again after the rebalance", partition,
                    refusedByTheGroup.getMessage());
            return;
        }
        deadLetters.clear();
        committedOffset = offset;
    }

    /** Drops what was sent since the last commit and refuses every later send. */
    void abandon() {
        lock.writeLock().lock();
        try {
            closed = true;
            releasing.clear();
            if (inTransaction) {
                inTransaction = false;
                producer.abortTransaction();
            }
        } catch (KafkaException fencedOrFailed) {
            // a fenced producer cannot abort; the new owner's initTransactions already did
        } finally {
            lock.writeLock().unlock();
        }
    }

    @Override
    public void close() {
        abandon();
        closeQuietly();
    }

    /** The open transaction holds a call a turn released before it was cancelled: it must not commit. */
    static final class ReleaseOfACancelledTurn extends KafkaException {
        ReleaseOfACancelledTurn(String turnId, String reason) {
            super("turn " + turnId + " released a call in the open transaction and was cancelled since (" + reason
                    + "); the release must not commit");
        }
    }

    /** Why the open transaction must not commit: the partition is let go and taken over again after a backoff. */
    abstract static class LetGo extends KafkaException {
        LetGo(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** A turn of the open transaction could not write its end. */
    static final class TurnEndNotWritten extends LetGo {
        TurnEndNotWritten(String turnId, Throwable why) {
            super("turn " + turnId + " could not write its end (" + why + "); the transaction must not commit without it",
                    why);
        }
    }

    /** A turn cannot run now, for what it depends on ({@link #cannotRunNow}). */
    static final class TurnCannotRunNow extends LetGo {
        TurnCannotRunNow(String turnId, RuntimeException why) {
            super("turn " + turnId + " cannot run now (" + why.getMessage() + ")", why);
        }
    }

    private void closeQuietly() {
        try {
            producerMetrics.close();
        } catch (Exception e) {
            // only meters: the producer closes regardless
        }
        producer.close(Duration.ofSeconds(5));
        completions.close();
    }
}
