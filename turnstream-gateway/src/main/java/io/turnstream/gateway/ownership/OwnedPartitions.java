package io.turnstream.gateway.ownership;

import io.turnstream.gateway.loop.TurnProgress;
import io.turnstream.model.Topics;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.Failures;
import io.turnstream.runtime.TraceContext;
import io.turnstream.schema.SchemaRegistryException;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.FencedInstanceIdException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the ownership loop decides, without Kafka: the partitions of {@code llm.turn-requests} this
 * gateway owns, what happens when one is assigned (fence the previous owner, resume its unfinished
 * turns), revoked (hand the turns over at a step boundary) or lost, and when the open transactions
 * commit. The group consumer and the producers are behind {@link GroupLog} and {@link Producers}
 * ({@link PartitionOwnership} is the Kafka shell); time comes from the injected clock. Called on
 * one thread, the consumer's.
 *
 * <p>A takeover that fails (the transactional producer's {@code InitProducerId} times out, or the
 * partition cannot be read) does not stop the loop: the partition is paused, so none of its
 * requests start a turn out of order, and the takeover is tried again after a backoff that doubles
 * up to {@link #MAX_RETRY_BACKOFF}. Until it succeeds {@link #healthy()} is false. A schema registry that cannot be
 * reached (on Avro) while a record is read is such a failure too, never the record's: the partition is let go and
 * taken over again after the backoff, which reads the record again; nothing is dead-lettered for it.
 *
 * <p>The backoff grows with the partition's failures since it last made progress (a commit of what its turns wrote),
 * not since its last takeover that succeeded: a takeover does succeed during a registry outage, and then its record or
 * resumed turn fails again, so counting from it would take the partition over (and fence its producer) every second
 * for as long as the outage lasts.
 */
public final class OwnedPartitions {

    private static final Logger LOG = LoggerFactory.getLogger(OwnedPartitions.class);
    static final Duration FIRST_RETRY_BACKOFF = Duration.ofSeconds(1);
    static final Duration MAX_RETRY_BACKOFF = Duration.ofSeconds(30);

    /** What the ownership loop needs of the group consumer. */
    public interface GroupLog {
        long position(TopicPartition partition);

        ConsumerGroupMetadata groupMetadata();

        void seek(TopicPartition partition, long offset);

        /** The metadata of the group's committed offset of each partition; empty without one. */
        Map<TopicPartition, String> committedMetadata(Set<TopicPartition> partitions);

        /** Moves back to the group's committed offset (the beginning without one). */
        void rewind(TopicPartition partition);

        void pause(TopicPartition partition);

        void resume(TopicPartition partition);

        /**
         * Every record of each partition from its offset in {@code from} to its end, read_committed, in one read; a
         * partition whose end cannot be found is left out, with why.
         */
        TurnResumer.PartitionsRead readToEnd(Map<TopicPartition, Long> from);

        /**
         * What Kafka holds of the turns a takeover resumes on the other topics, each topic's partitions read once for
         * all of them, when a turn first asks ({@link TurnResumer#turnsOf}).
         */
        TurnResumer.TurnLog turnsOf(List<TurnRequestRecord> resumed);
    }

    /** Opens the transactional producer of a partition's turns (not yet initialised). */
    public interface Producers {
        OwnedPartition.TransactionalProducer open(TopicPartition partition);
    }

    private final Topics topics;
    private final WireFormat format;
    private final OwnershipConfig config;
    private final PartitionOwnership.Turns turns;
    private final GroupLog log;
    private final Producers producers;
    private final Clock clock;
    private final Map<TopicPartition, OwnedPartition> owned = new ConcurrentHashMap<>();
    /** The partitions whose takeover failed or that were let go, to when (the clock's millis) each is tried again. */
    private final Map<TopicPartition, Long> retrying = new ConcurrentHashMap<>();
    /** How often each partition failed or was let go since it last made progress: its next backoff grows with it. */
    private final Map<TopicPartition, Integer> setbacks = new ConcurrentHashMap<>();

    public OwnedPartitions(Topics topics, WireFormat format, OwnershipConfig config, PartitionOwnership.Turns turns,
                           GroupLog log, Producers producers, Clock clock) {
        this.topics = topics;
        this.format = format;
        this.config = config;
        this.turns = turns;
        this.log = log;
        this.producers = producers;
        this.clock = clock;
    }

    /** Whether every assigned partition is taken over (none waits for a retry). */
    public boolean healthy() {
        return retrying.isEmpty();
    }

    /** The partitions owned now. */
    Set<TopicPartition> owned() {
        return Set.copyOf(owned.keySet());
    }

    /** The partitions assigned but not taken over yet: their takeover is retried. */
    Set<TopicPartition> retrying() {
        return Set.copyOf(retrying.keySet());
    }

    OwnedPartition owner(TopicPartition partition) {
        return owned.get(partition);
    }

    /**
     * Takes the partitions over together. Every previous owner is fenced at once ({@link ParallelFencing}), so a read
     * of any of them finds every transaction resolved; the partitions fenced are read from their committed offsets
     * in one read; then the unfinished turns of all of them are resumed, and their records on the other topics read
     * once for all ({@link TakeoverHistory}). A partition that cannot be fenced or read is tried again after a
     * backoff; the others go on (a read that fails as a whole tries all of its partitions again).
     */
    public void assigned(Collection<TopicPartition> partitions) {
        long started = clock.millis();
        ParallelFencing.Fenced fencing = ParallelFencing.fenceAll(partitions, this::newOwner);
        fencing.failures().forEach(this::retryLater);
        Map<TopicPartition, OwnedPartition> fenced = new LinkedHashMap<>(fencing.owners());
        fenced.forEach((partition, owner) -> {
            owned.put(partition, owner);
            if (retrying.remove(partition) != null) {
                log.resume(partition);
            }
        });
        if (fenced.isEmpty()) {
            return;
        }
        long fencedAt = clock.millis();
        Map<TopicPartition, Long> from = new LinkedHashMap<>();
        TurnResumer.PartitionsRead read;
        try {
            Map<TopicPartition, String> metadata = log.committedMetadata(fenced.keySet());
            fenced.forEach((partition, owner) -> {
                from.put(partition, log.position(partition));
                owner.committedMetadata(metadata.get(partition));
            });
            read = log.readToEnd(from);
        } catch (KafkaException e) {
            fenced.keySet().forEach(partition -> unread(partition, e));
            return;
        }
        read.unreadable().forEach((partition, e) -> {
            unread(partition, e);
            fenced.remove(partition);
        });
        if (fenced.isEmpty()) {
            return;
        }
        long readAt = clock.millis();
        int resumed = resume(fenced, from, read.records());
        LOG.info("took over {} in {} ms: fenced together in {} ms, read in {} ms, {} turn(s) to resume or check",
                fenced.keySet(), clock.millis() - started, fencedAt - started, readAt - fencedAt, resumed);
    }

    /** A partition fenced but not read: let go, its takeover is tried again after a backoff. */
    private void unread(TopicPartition partition, RuntimeException why) {
        stopTurns(owned.remove(partition));
        retryLater(partition, why);
    }

    /** Opens the partition's producer and fences its previous owner ({@link OwnedPartition}); on a thread of its own. */
    private OwnedPartition newOwner(TopicPartition partition) {
        return new OwnedPartition(partition, producers.open(partition), topics, format, config.claims(), clock);
    }

    private void retryLater(TopicPartition partition, RuntimeException cause) {
        int failures = setbacks.merge(partition, 1, Integer::sum);
        long backoff = Math.min(MAX_RETRY_BACKOFF.toMillis(), FIRST_RETRY_BACKOFF.toMillis() << Math.min(failures - 1, 16));
        retrying.put(partition, clock.millis() + backoff);
        log.pause(partition);
        LOG.warn("cannot take {} over (failure {}): {}; trying again in {} ms", partition, failures,
                cause.getMessage(), backoff);
    }

    /** Tries again the takeovers whose backoff has passed. */
    public void retryDue() {
        long now = clock.millis();
        List<TopicPartition> due = retrying.entrySet().stream()
                .filter(entry -> entry.getValue() <= now).map(Map.Entry::getKey).toList();
        if (!due.isEmpty()) {
            assigned(due);
        }
    }

    /** A record read from an owned partition: a new request starts its turn. */
    public void record(ConsumerRecord<String, byte[]> record) {
        TopicPartition topicPartition = new TopicPartition(record.topic(), record.partition());
        OwnedPartition partition = owned.get(topicPartition);
        if (partition == null) {
            return;
        }
        TurnRequestRecord request;
        try {
            request = read(record, partition);
        } catch (SchemaRegistryException registryDown) {
            // the consumer is past the record: back to the committed offset, taken over again once the backoff is over
            stopTurns(owned.remove(topicPartition));
            log.rewind(topicPartition);
            retryLater(topicPartition, registryDown);
            return;
        }
        // step records on a partition this gateway owns are its own checkpoints
        if (request != null && request.startsTurn()) {
            turns.run(request, traceOf(record), List.of(), false, partition, record.offset());
        }
    }

    /** The trace of the HTTP request that accepted the turn, carried in the record's headers. */
    private static TraceContext traceOf(ConsumerRecord<String, byte[]> record) {
        TraceContext trace = TraceContext.fromHeaders(record.headers());
        return trace != null ? trace : TraceContext.fresh();
    }

    /**
     * The request or step a record holds; null, after sending it to the dead-letter topic with the reason, when it
     * cannot be used: it does not parse, lacks the ids its kind needs, or (a step) its checkpoint cannot be read
     * back. Every next owner would fail on it the same way; dead-lettered (once: see {@link OwnedPartition#deadLetter}),
     * it stops nothing else.
     *
     * @throws SchemaRegistryException when the schema registry cannot be reached: not the record's fault
     */
    private TurnRequestRecord read(ConsumerRecord<String, byte[]> record, OwnedPartition owner) {
        String problem;
        TurnRequestRecord read = null;
        try {
            read = format.read(record.topic(), record.value(), TurnRequestRecord.class);
            problem = unusable(read);
        } catch (SchemaRegistryException registryDown) {
            throw registryDown;
        } catch (IOException | RuntimeException e) {
            problem = "not a turn request record: " + e.getMessage();
        }
        if (problem == null) {
            return read;
        }
        if (owner.deadLetter(record, problem)) {
            LOG.warn("dead-lettered the unusable turn request record at {}-{}@{}: {}", record.topic(),
                    record.partition(), record.offset(), problem);
        }
        return null;
    }

    /** Why a parsed record cannot be used, or null. */
    static String unusable(TurnRequestRecord read) {
        if (read.type() == null || read.turnId() == null || read.threadId() == null || read.runId() == null) {
            return "a turn request record needs its type, turnId, threadId and runId";
        }
        if (read.startsTurn()) {
            return read.request() != null && read.request().isObject() ? null : "a request record needs its request";
        }
        if (read.step() == null || read.step() < 1 || read.checkpoint() == null || !read.checkpoint().isObject()) {
            return "a step record needs its step (from 1) and its checkpoint";
        }
        try {
            TurnProgress.of(read.runId(), null, List.of(read), List.of());
            return null;
        } catch (RuntimeException e) {
            return "the checkpoint of step " + read.step() + " cannot be read: " + e;
        }
    }

    /**
     * Commits each owned partition's open transaction with its group offset. A commit that fails stops the partition's
     * turns and takes it over again from Kafka (what was sent since the last commit is aborted; the turns resume from
     * what was committed): at once, or, when the producer was fenced or a turn could not write its end, after a
     * backoff ({@link #retryLater}). A commit of what the turns wrote is the partition's progress: its next failure
     * backs off from the start again.
     */
    public void commitAll() {
        for (Map.Entry<TopicPartition, OwnedPartition> entry : owned.entrySet()) {
            TopicPartition partition = entry.getKey();
            try {
                if (entry.getValue().commit(log.position(partition), log.groupMetadata())) {
                    setbacks.remove(partition);
                }
            } catch (FencedInstanceIdException fenced) {
                LOG.warn("another gateway owns {} now: {}", partition, fenced.getMessage());
                stopTurns(owned.remove(partition));
            } catch (KafkaException e) {
                stopTurns(owned.remove(partition));
                log.rewind(partition);
                if (Failures.epochBumped(e) || e instanceof OwnedPartition.LetGo) {
                    // Fenced: another gateway may own the partition now (the group moved it while this one did not
                    // poll), or the coordinator aborted a transaction of this one that timed out (under transactions
                    // v2 its epoch bump shows as a fencing although nobody else holds the partition). Taken over again
                    // at once, the other owner would be fenced, and would fence this one back, to and fro until this
                    // consumer learns of the loss. Let go, it is tried again after the backoff, by when the polls
                    // meanwhile have told the consumer whether the group still gives it here (a partition lost or
                    // revoked is not tried again). A turn that could not write its end: its next try may fail alike,
                    // so it is not made at once either; nor that of a turn that cannot run now (a schema registry that
                    // cannot be reached).
                    LOG.warn("cannot commit the turns of {} ({}); letting it go, to take it over again after a backoff "
                            + "if the group still gives it here", partition, e.getMessage());
                    retryLater(partition, e);
                } else {
                    // for instance a release of a turn cancelled since (OwnedPartition.commit). (A group that refuses
                    // the offset during a rebalance refuses only the offset: OwnedPartition.commit.)
                    LOG.warn("cannot commit the turns of {} ({}); taking the partition over again from Kafka",
                            partition, e.getMessage());
                    assigned(List.of(partition));
                }
            }
        }
    }

    /** The turn id an unusable record names, if it parses that far. */
    private Optional<String> turnIdOf(ConsumerRecord<String, byte[]> record) {
        try {
            return Optional.ofNullable(format.read(record.topic(), record.value(), TurnRequestRecord.class).turnId());
        } catch (SchemaRegistryException registryDown) {
            throw registryDown;
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** A request read at a takeover, with the trace of the HTTP request that accepted it. */
    private record Accepted(long offset, TurnRequestRecord request, TraceContext trace) {
    }

    /**
     * What a takeover found on a partition from its committed offset: the requests whose turns to resume or check
     * (each turn once, in order), their step records, and the turns with a record that cannot be used.
     */
    private record Backlog(List<Accepted> requests, Map<String, List<TurnRequestRecord>> steps,
                           Map<String, String> unresumable) {
    }

    /**
     * Resumes the turns not finished of the partitions read at a takeover, all of whose records on the other topics
     * are read once, when the first asks and once every one is registered; returns how many there are.
     */
    private int resume(Map<TopicPartition, OwnedPartition> fenced, Map<TopicPartition, Long> from,
                       Map<TopicPartition, List<ConsumerRecord<String, byte[]>>> read) {
        Map<TopicPartition, Backlog> backlogs = new LinkedHashMap<>();
        List<TurnRequestRecord> requests = new ArrayList<>();
        for (TopicPartition partition : List.copyOf(fenced.keySet())) {
            Backlog backlog;
            try {
                backlog = backlog(partition, fenced.get(partition), from.get(partition),
                        read.getOrDefault(partition, List.of()));
            } catch (SchemaRegistryException registryDown) {
                // nothing resumed or sought yet (a dead letter sent goes with the aborted transaction): read it
                // again after the backoff
                unread(partition, registryDown);
                fenced.remove(partition);
                continue;
            }
            LOG.info("owning {} from offset {}: {} turn(s) to resume or check", partition, from.get(partition),
                    backlog.requests().size());
            backlogs.put(partition, backlog);
            backlog.requests().forEach(accepted -> requests.add(accepted.request()));
        }
        TakeoverHistory history = new TakeoverHistory(log.turnsOf(requests));
        try {
            backlogs.forEach((partition, backlog) -> {
                OwnedPartition owner = fenced.get(partition);
                owner.resuming(history);
                for (Accepted accepted : backlog.requests()) {
                    String turnId = accepted.request().turnId();
                    List<TurnRequestRecord> itsSteps = backlog.steps().getOrDefault(turnId, List.of());
                    String unresumable = backlog.unresumable().get(turnId);
                    if (unresumable != null) {
                        turns.endUnresumable(accepted.request(), accepted.trace(), itsSteps, owner, accepted.offset(),
                                unresumable);
                    } else {
                        turns.run(accepted.request(), accepted.trace(), itsSteps, true, owner, accepted.offset());
                    }
                }
            });
        } finally {
            history.registered();
        }
        return requests.size();
    }

    /** Sorts a partition's records from its committed offset, dead-lettering the unusable, and reads on after them. */
    private Backlog backlog(TopicPartition partition, OwnedPartition owner, long from,
                            List<ConsumerRecord<String, byte[]>> records) {
        List<Accepted> requests = new ArrayList<>();
        // a turn requested twice (the same Idempotency-Key accepted by two gateways) is resumed once
        Set<String> requested = new HashSet<>();
        Map<String, List<TurnRequestRecord>> steps = new HashMap<>();
        // turns with a step record that cannot be used: they end with an error instead of calling that step again
        Map<String, String> unresumable = new HashMap<>();
        long next = from;
        for (ConsumerRecord<String, byte[]> record : records) {
            next = record.offset() + 1;
            TurnRequestRecord read = read(record, owner);
            if (read == null) {
                turnIdOf(record).ifPresent(turnId -> unresumable.putIfAbsent(turnId, "its record at "
                        + record.topic() + "-" + record.partition() + "@" + record.offset() + " cannot be used (it "
                        + "is on " + topics.deadLetters() + ")"));
                continue;
            }
            if (read.startsTurn()) {
                if (requested.add(read.turnId())) {
                    requests.add(new Accepted(record.offset(), read, traceOf(record)));
                }
            } else {
                steps.computeIfAbsent(read.turnId(), id -> new ArrayList<>()).add(read);
            }
        }
        log.seek(partition, next);
        return new Backlog(requests, steps, unresumable);
    }

    /**
     * Asks the partitions' turns to stop at their next step boundary, waits up to {@code timeout}
     * (committing meanwhile, so other partitions keep streaming), then commits and lets go. Turns
     * still inside a step then are stopped where they are and their uncommitted events aborted: the
     * next owner takes that step back.
     */
    public void revoked(Collection<TopicPartition> partitions, Duration timeout) {
        partitions.forEach(this::forget);
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
        long deadline = clock.millis() + timeout.toMillis();
        try {
            // a turn may end at any moment (on its own thread): ask again after each commit which one is busy
            for (Optional<OwnedPartition> busy = firstBusy(leaving); busy.isPresent() && clock.millis() < deadline;
                 busy = firstBusy(leaving)) {
                commitAll();
                for (OwnedPartition owner : leaving) {
                    owner.commit(log.position(owner.partition()), log.groupMetadata());
                }
                busy.get().awaitIdle(config.commitInterval());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (KafkaException e) {
            LOG.warn("cannot commit while handing over {}: {}", partitions, e.getMessage());
        }
        for (OwnedPartition owner : leaving) {
            try {
                if (owner.running().isEmpty()) {
                    owner.commit(log.position(owner.partition()), log.groupMetadata());
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

    private static Optional<OwnedPartition> firstBusy(List<OwnedPartition> owners) {
        return owners.stream().filter(owner -> !owner.running().isEmpty()).findFirst();
    }

    /** The gateway stops: every partition is handed over within {@code timeout}. */
    public void revokeAll(Duration timeout) {
        revoked(List.copyOf(owned.keySet()), timeout);
        retrying.clear();
        setbacks.clear();
    }

    /** The partitions went to another gateway before they could be handed over. */
    public void lost(Collection<TopicPartition> partitions) {
        partitions.forEach(partition -> {
            forget(partition);
            stopTurns(owned.remove(partition));
        });
    }

    /** A partition no longer this gateway's: not tried again, and its failures not counted if it comes back. */
    private void forget(TopicPartition partition) {
        retrying.remove(partition);
        setbacks.remove(partition);
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
}
