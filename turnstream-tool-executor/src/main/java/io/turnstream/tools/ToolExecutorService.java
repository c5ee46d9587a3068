package io.turnstream.tools;

import io.turnstream.model.ControlMessage;
import io.turnstream.model.ToolCall;
import io.turnstream.model.ToolResult;
import io.turnstream.model.Topics;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.Failures;
import io.turnstream.runtime.GrouplessConsumer;
import io.turnstream.runtime.ServiceMetrics;
import io.turnstream.runtime.Settings;
import io.turnstream.schema.SchemaRegistryException;
import io.turnstream.schema.WireFormats;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.FencedInstanceIdException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tool executor: consumes {@code llm.tool-calls}, runs each call through the {@link ToolScheduler}
 * and publishes exactly one {@link ToolResult} per call id to {@code llm.tool-results}.
 *
 * <p>One thread owns the Kafka clients and polls continuously; tools run on their own threads, so a
 * long tool never delays a poll. When more than {@code max-in-flight} calls are held, the tool-call
 * partitions are paused (and resumed below it) while polling goes on. Results are published in Kafka
 * transactions together with the consumer offsets and the call's ledger mark ({@link CallLedger}), so
 * after a crash or a redelivery a call whose result was committed is skipped, and a non-idempotent call
 * that had started is answered "outcome unknown" instead of being run twice.
 *
 * <p>This class is the composition and the loop; the parts: {@link ToolCallIntake} (records to calls),
 * {@link ResultOutbox} (what to publish), {@link ResultTransactions} (publishing it transactionally),
 * {@link CommittedPositions} (rewinding), {@link CallPartitionsRebalance} and {@link ToolExecutorClients}.
 */
public final class ToolExecutorService implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ToolExecutorService.class);
    private static final Duration POLL = Duration.ofMillis(200);
    private static final Duration SWEEP_EVERY = Duration.ofSeconds(30);
    private static final Duration MAX_BACKOFF = Duration.ofSeconds(30);
    /** A JSON-escaped output can grow up to six times (\\u0000 for each control byte), plus the record's other fields. */
    private static final int RESULT_OVERHEAD_BYTES = 64 * 1024;

    private final Settings settings;
    private final ToolRegistry registry;
    private final ToolExecutorConfig config;
    private final ToolExecutorClients clients;
    private final Topics topics;
    private final WireFormat wire;
    private final Clock clock;
    private final CallLedger ledger;
    private final OffsetTracker offsets = new OffsetTracker();
    private final ResultOutbox outbox;
    private final ProducerFencing fencing;
    private final CompletableFuture<Void> stopped = new CompletableFuture<>();

    private ToolExecutorMetrics metrics;
    private ServiceMetrics serviceMetrics;
    private boolean ownsServiceMetrics;
    private ToolScheduler scheduler;
    private ToolCallIntake intake;
    private ResultTransactions transactions;
    private KafkaConsumer<String, byte[]> consumer;
    private CommittedPositions committed;
    private CallPartitionsRebalance rebalance;
    private GrouplessConsumer ledgerReader;
    private CancelListener cancels;
    private ControlEnds controlEnds;
    private Thread loop;
    private volatile boolean closing;
    /** What made a helper of the loop (the cancel listener) stop for good; the executor stops with it. */
    private volatile Throwable helperFailure;
    private volatile int pausedPartitions;
    /** Deadlines of the loop, in {@link System#nanoTime()}: intervals, not moments, so not from the clock. */
    private long nextSweep = System.nanoTime();
    private int failuresInARow;
    private long resumeFetchingAt = System.nanoTime();
    private long resumePublishingAt = System.nanoTime();
    /** A tool-call record to read again once the schema registry answers. */
    private final RegistryWait reading;
    /** The record {@link #reading} waits on, while it waits: the wait is over once it is read or no longer ours. */
    private RecordPosition waitingAt;
    /** Results (and notices) to publish again once the schema registry answers: on Avro, their schema is registered on first write. */
    private final RegistryWait publishing;

    public ToolExecutorService(Settings settings, ToolRegistry registry) {
        this(settings, registry, WireFormats.from(settings));
    }

    public ToolExecutorService(Settings settings, ToolRegistry registry, WireFormat wire) {
        this.settings = settings;
        this.registry = registry;
        this.config = ToolExecutorConfig.from(settings);
        this.clients = new ToolExecutorClients(settings, config);
        this.topics = settings.topics();
        this.wire = wire;
        this.clock = settings.clock();
        this.ledger = new CallLedger(config.ledgerTopic(), clock);
        this.outbox = new ResultOutbox(topics, config.deadLetterTopic(), wire, ledger);
        this.reading = new RegistryWait(config.instanceId(), "tool-calls");
        this.publishing = new RegistryWait(config.instanceId(), "tool-results");
        this.fencing = new ProducerFencing(config.instanceId(), ProducerFencing.ofGroup(settings.kafkaProperties(), config.groupId()));
        if (settings.bootstrapServers() == null) {
            throw new IllegalArgumentException("the tool executor needs bootstrap servers (--bootstrap-servers or "
                    + Settings.BOOTSTRAP_ENV + ")");
        }
        long maxRequest = Long.parseLong(settings.kafkaProperties().getProperty(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, "1048576"));
        if (6L * config.limits().maxBytes() + RESULT_OVERHEAD_BYTES > maxRequest) {
            throw new IllegalArgumentException("max-output-bytes " + config.limits().maxBytes() + " is too large for "
                    + ProducerConfig.MAX_REQUEST_SIZE_CONFIG + "=" + maxRequest + ": a result could not be published");
        }
    }

    /** Puts this executor's meters in the caller's registry (closed by the caller) instead of one of its own; before {@link #start()}. */
    public synchronized ToolExecutorService withMetrics(ServiceMetrics shared) {
        this.serviceMetrics = shared;
        return this;
    }

    /**
     * Checks the workspace and topics (creating the executor's own ledger and dead-letter topics when
     * missing), joins the consumer group and starts polling. Throws with a clear message when it cannot.
     */
    public synchronized ToolExecutorService start() {
        if (loop != null) {
            throw new IllegalStateException("already started");
        }
        try {
            Workspace workspace = new Workspace(config.workspace());
            ExecutorTopics.ensure(settings.kafkaProperties(), topics, config);
            ToolDefinitionPublisher.publish(settings.kafkaProperties(), topics, wire, registry, config.instanceId(), clock);
            if (serviceMetrics == null) {
                serviceMetrics = ServiceMetrics.create("tool-executor", settings);
                ownsServiceMetrics = true;
            }
            metrics = new ToolExecutorMetrics(config.instanceId(), serviceMetrics.reporter("turnstream"));
            scheduler = new ToolScheduler(registry, config, workspace, new ToKafka(), clock);
            metrics.gauges(scheduler::running, scheduler::queued, () -> pausedPartitions);
            intake = new ToolCallIntake(wire, config.claims(), ledger, offsets, outbox, scheduler, clock);
            transactions = new ResultTransactions(clients.producer(), serviceMetrics, () -> closing);
            consumer = new KafkaConsumer<>(clients.callsConsumer(), new StringDeserializer(), new ByteArrayDeserializer());
            serviceMetrics.bind(consumer);
            committed = new CommittedPositions(consumer, () -> closing);
            ledgerReader = new GrouplessConsumer("turnstream-tool-executor-ledger", clients.plainConsumer("ledger"));
            rebalance = new CallPartitionsRebalance(scheduler, outbox, ledger, offsets, committed, ledgerReader, this::flush);
            controlEnds = new ControlEnds(clients.controlEnds(), topics.control());
            cancels = new CancelListener(clients.plainConsumer("cancels"), topics.control(), wire,
                    clock.instant().minus(config.turnMemory()), scheduler::cancelTurn, scheduler::decide,
                    scheduler::controlRead, this::stopOn).start();
            loop = new Thread(this::run, "turnstream-tool-executor");
            loop.start();
            LOG.info("tool executor {} started: workspace {}, tools {}", config.instanceId(), workspace.root(),
                    registry.definitions().stream().map(ToolDefinition::name).toList());
            return this;
        } catch (IOException e) {
            closeQuietly();
            throw new IllegalArgumentException("workspace " + config.workspace() + " is not an existing directory", e);
        } catch (RuntimeException e) {
            closeQuietly();
            throw e;
        }
    }

    /** The tools this executor runs, as the gateway offers them to the model. */
    public List<ToolDefinition> definitions() {
        return registry.definitions();
    }

    public ToolExecutorMetrics metrics() {
        return metrics;
    }

    /** Every meter of this executor, for {@code /metrics/prometheus}; null before {@link #start()}. */
    public ServiceMetrics serviceMetrics() {
        return serviceMetrics;
    }

    /**
     * What the executor holds back while the schema registry cannot be reached, with why: {@code tool-calls} when it
     * reads a tool-call record again after a backoff instead of taking it, {@code tool-results} when it publishes
     * results again after a backoff; empty while it does neither.
     */
    public Map<String, SchemaRegistryException> waitingFor() {
        Map<String, SchemaRegistryException> waits = new TreeMap<>();
        for (RegistryWait wait : List.of(reading, publishing)) {
            wait.cause().ifPresent(cause -> waits.put(wait.holding(), cause));
        }
        return waits;
    }

    /** Completes when the service stops: normally after {@link #close()}, exceptionally when it failed. */
    public CompletableFuture<Void> stopped() {
        return stopped;
    }

    /**
     * Stops fetching, waits up to the shutdown grace for running calls and publishes their results, then
     * stops. Calls still unanswered are not answered by this instance: the next one picks them up.
     */
    @Override
    public void close() {
        closing = true;
        Thread running;
        synchronized (this) {
            running = loop;
        }
        if (running == null) {
            closeQuietly();
            stopped.complete(null);
            return;
        }
        if (!running.isAlive()) {
            return;
        }
        consumer.wakeup();
        try {
            running.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A helper failed for good: drain and stop, reporting the failure through {@link #stopped()}. */
    private void stopOn(Throwable cause) {
        helperFailure = cause;
        closing = true;
        consumer.wakeup();
    }

    private void run() {
        Throwable failure = null;
        try {
            consumer.subscribe(List.of(topics.toolCalls()), rebalance);
            while (!closing) {
                step();
            }
            drain();
            failure = helperFailure;
        } catch (ProducerFencedException | FencedInstanceIdException e) {
            failure = e;
            LOG.error("another tool executor with instance id {} took over; this one stops. Give each instance its own "
                    + ToolExecutorConfig.PREFIX + "instance-id", config.instanceId());
        } catch (RuntimeException | Error e) {
            failure = e;
            LOG.error("tool executor {} stopped by an unexpected failure", config.instanceId(), e);
        } finally {
            closeQuietly();
            if (failure == null) {
                stopped.complete(null);
            } else {
                stopped.completeExceptionally(failure);
            }
        }
    }

    /** One turn of the loop: read calls, publish what is ready, hold back when too much is in flight. */
    private void step() {
        take(poll());
        flush();
        applyBackpressure();
        if (System.nanoTime() - nextSweep >= 0) {
            scheduler.sweep();
            ledger.prune(offsets.lastCommitted());
            nextSweep = System.nanoTime() + SWEEP_EVERY.toNanos();
        }
    }

    /**
     * Hands the poll's records to the intake, partition by partition. A record that cannot be read for now (a schema
     * registry that cannot be reached) skips nothing: it and the poll's records after it are read again after a backoff
     * that grows while the registry stays away, fetching held meanwhile (polling goes on, so the group membership stays).
     *
     * <p>First it takes {@code llm.control}'s ends: the poll's calls start only once the cancel listener has read past
     * them ({@link ControlFence}), so a cancel written before a call was read (the user cancelled, the gateway had not
     * read it yet when it released the call) aborts it unrun, however far the listener lags. When the ends cannot be
     * had in time, the poll's records are read again after a backoff: no call runs without its fence.
     */
    private void take(ConsumerRecords<String, byte[]> records) {
        ControlFence fence = ControlFence.NONE;
        if (!records.isEmpty()) {
            try {
                fence = controlEnds.now();
            } catch (RetriableException e) {
                LOG.warn("the end offsets of {} could not be read ({}); reading the poll's {} tool call(s) again after a "
                        + "backoff", topics.control(), e.toString(), records.count());
                records.partitions().forEach(partition -> readAgainFromFirst(records, partition));
                holdFetching(1);
                return;
            }
        }
        for (TopicPartition partition : records.partitions()) {
            for (ConsumerRecord<String, byte[]> record : records.records(partition)) {
                try {
                    intake.accept(record, fence);
                } catch (RuntimeException e) {
                    SchemaRegistryException registry = Failures.registryFailure(e);
                    if (registry == null) {
                        throw e;
                    }
                    readAgainLater(records, partition, record.offset(), registry);
                    return;
                }
            }
        }
        endRegistryWaitIfOver(records);
    }

    /**
     * Ends the wait for the schema registry once the record it waits on was read (the poll, taken whole, holds records
     * of its partition, which was sought back to that record) or once that partition is no longer this executor's (its
     * new owner reads the record). Waiting for a record the next poll cannot bring would keep {@code /health} at 503
     * while the partitions left stay idle.
     */
    private void endRegistryWaitIfOver(ConsumerRecords<String, byte[]> records) {
        if (waitingAt == null) {
            return;
        }
        TopicPartition partition = waitingAt.partition();
        if (!records.records(partition).isEmpty()) {
            reading.over("it reads " + partition + " on");
        } else if (!consumer.assignment().contains(partition)) {
            reading.over(partition + " is no longer its");
        } else {
            return;
        }
        waitingAt = null;
    }

    /** Seeks {@code failed} back to {@code offset}, and each partition the poll handed over after it to its first record. */
    private void readAgainLater(ConsumerRecords<String, byte[]> records, TopicPartition failed, long offset,
                                SchemaRegistryException registry) {
        boolean after = false;
        for (TopicPartition partition : records.partitions()) {
            if (partition.equals(failed)) {
                consumer.seek(partition, offset);
                after = true;
            } else if (after) {
                readAgainFromFirst(records, partition);
            }
        }
        waitingAt = new RecordPosition(failed, offset);
        holdFetching(reading.failed(registry, "read " + failed + " at offset " + offset));
    }

    /** Seeks {@code partition} back to its first record in the poll: the next fetch brings them all again. */
    private void readAgainFromFirst(ConsumerRecords<String, byte[]> records, TopicPartition partition) {
        consumer.seek(partition, records.records(partition).get(0).offset());
    }

    private ConsumerRecords<String, byte[]> poll() {
        try {
            return consumer.poll(POLL);
        } catch (WakeupException e) {
            // a result is ready, or close() was called
            return ConsumerRecords.empty();
        }
    }

    /**
     * Publishes everything ready in one transaction with the offsets it completes; rewinds when that fails. Nothing is
     * published while it waits for the schema registry to write a batch: not even offsets, which would count that
     * batch's calls as answered.
     */
    private void flush() {
        if (System.nanoTime() - resumePublishingAt < 0) {
            return;
        }
        List<ResultOutbox.Outgoing> batch = outbox.takeAll();
        // a call dropped or aborted before its started marker went out never runs: no marker for it
        batch.removeIf(item -> item instanceof ResultOutbox.StartMarker marker && marker.call().resolved());
        List<ProducerRecord<String, byte[]>> records = encode(batch);
        if (records == null) {
            return;
        }
        for (ResultOutbox.Outgoing item : batch) {
            if (item instanceof ResultOutbox.Answer || item instanceof ResultOutbox.DeadLetter) {
                offsets.answered(item.position());
            }
        }
        Map<TopicPartition, OffsetAndMetadata> commit = offsets.committable();
        if (batch.isEmpty() && commit.isEmpty()) {
            return;
        }
        if (!publish(records, partitionsOf(batch), commit)) {
            return;
        }
        failuresInARow = 0;
        offsets.committed(commit);
        for (ResultOutbox.Outgoing item : batch) {
            if (item instanceof ResultOutbox.Answer answer) {
                outbox.published(answer);
                ledger.committed(answer.call(), answer.position(), CallLedger.Mark.COMPLETED);
                metrics.record(answer.result());
            } else if (item instanceof ResultOutbox.StartMarker marker) {
                ledger.committed(marker.call().call, marker.position(), CallLedger.Mark.STARTED);
                scheduler.launch(marker.call());
            } else if (item instanceof ResultOutbox.DeadLetter) {
                metrics.deadLettered();
            }
        }
    }

    /**
     * Publishes the batch with the offsets it completes; false, after rewinding, when that failed. A transaction that
     * failed on an epoch bump (the coordinator's abort at the timeout, once the group said no other instance took
     * over) is published once more with a new transaction: the executor still holds the results it computed, so a
     * non-idempotent call whose "started" mark was committed gets the result of its one run, not the
     * {@code OUTCOME_UNKNOWN} a rewind would give it. That transaction also commits the offset of every partition its
     * items are of (the last committed one where it did not move), so the group coordinator checks that this consumer
     * still owns each of them: if another instance does, the transaction fails and nothing of it is visible.
     */
    private boolean publish(List<ProducerRecord<String, byte[]>> records, Set<TopicPartition> itemsOf,
                            Map<TopicPartition, OffsetAndMetadata> commit) {
        KafkaException failure;
        try {
            transactions.publish(records, commit, consumer.groupMetadata());
            return true;
        } catch (FencedInstanceIdException e) {
            throw e;
        } catch (KafkaException e) {
            failure = e;
        }
        boolean fenced = endFailed(failure);
        if (Failures.epochBumped(failure)) {
            LOG.warn("a transaction of tool executor {} ({} result(s), mark(s) or notice(s)) failed on a bumped producer "
                    + "epoch ({}), as when the transaction coordinator aborts one open past {}; publishing it again in a new "
                    + "transaction", config.instanceId(), records.size(), failure.toString(),
                    ProducerConfig.TRANSACTION_TIMEOUT_CONFIG);
            try {
                transactions.publish(records, offsets.coveringEach(commit, itemsOf), consumer.groupMetadata());
                return true;
            } catch (FencedInstanceIdException e) {
                throw e;
            } catch (KafkaException e) {
                failure = e;
                fenced |= endFailed(failure);
            }
        }
        rewind(failure, fenced);
        return false;
    }

    /**
     * The records of the batch, or null when the schema registry cannot be reached to write them (on Avro, a result or
     * notice whose schema is not registered yet). Written before the transaction begins, so such a failure leaves
     * nothing to abort: the batch goes back to the outbox, whole and in order, and is published after a backoff that
     * grows while the registry stays away. The executor goes on meanwhile, and no result is lost or written twice.
     */
    private List<ProducerRecord<String, byte[]>> encode(List<ResultOutbox.Outgoing> batch) {
        List<ProducerRecord<String, byte[]>> records = new ArrayList<>();
        try {
            batch.forEach(item -> records.addAll(outbox.records(item)));
        } catch (RuntimeException e) {
            SchemaRegistryException registry = Failures.registryFailure(e);
            if (registry == null) {
                throw e;
            }
            outbox.putBack(batch);
            resumePublishingAt = backoffDeadline(publishing.failed(registry, "publish " + batch.size() + " result(s), "
                    + "mark(s) or notice(s)"));
            return null;
        }
        publishing.over("it publishes results again");
        return records;
    }

    private static Set<TopicPartition> partitionsOf(List<ResultOutbox.Outgoing> batch) {
        Set<TopicPartition> partitions = new HashSet<>();
        batch.forEach(item -> partitions.add(item.position().partition()));
        return partitions;
    }

    /**
     * Ends a failed transaction: aborts it, or replaces the producer when it cannot or was fenced by the coordinator
     * (another instance that took over stops the executor: {@link #renewFenced}). Returns whether it was fenced.
     */
    private boolean endFailed(KafkaException cause) {
        if (cause instanceof ProducerFencedException producerFenced) {
            renewFenced(producerFenced);
            return true;
        }
        try {
            transactions.abort();
            return false;
        } catch (ProducerFencedException e) {
            renewFenced(e);
            return true;
        }
    }

    /**
     * A transaction failed and nothing of it is visible: drop the work in flight and read again from the committed
     * offsets, as a restarted instance would; the ledger skips what was answered.
     */
    private void rewind(KafkaException cause, boolean fenced) {
        failuresInARow++;
        LOG.warn("publishing results failed ({}); rewinding to the last committed offsets", cause.toString());
        scheduler.dropAll();
        outbox.clear();
        ledger.forgetSeen();
        offsets.clear();
        committed.seekBack(consumer.assignment());
        if (fenced) {
            // as after a restart: a same-id instance that started before it joined the group may have committed
            // "started" marks with its producer meanwhile, and such a call must be answered OUTCOME_UNKNOWN, not run again
            rebalance.restoreLedger(consumer.assignment());
        }
        holdFetching(failuresInARow);
    }

    /** Holds fetching for a while (still polling, so the group membership stays), longer after each failure in a row. */
    private void holdFetching(int failures) {
        resumeFetchingAt = backoffDeadline(failures);
    }

    /** When to try again after this many failures in a row, in {@link System#nanoTime()}: 200 ms doubling up to 30 s. */
    private static long backoffDeadline(int failures) {
        return System.nanoTime()
                + Duration.ofMillis(Math.min(MAX_BACKOFF.toMillis(), 100L << Math.min(failures, 10))).toNanos();
    }

    /**
     * The producer was fenced: stops the executor (rethrows) when another instance took over, else replaces the
     * producer, since the coordinator only aborted a transaction that outlived its timeout.
     */
    private void renewFenced(ProducerFencedException fenced) {
        String memberId = consumer.groupMetadata().memberId();
        if (fencing.causeOf(fenced, memberId) == ProducerFencing.Cause.ANOTHER_INSTANCE) {
            throw fenced;
        }
        LOG.warn("the producer of tool executor {} was fenced, but the group still gives instance id {} to this executor's "
                + "member {}, so no other instance took over: the transaction coordinator aborted a transaction that outlived "
                + "{} (a broker failing over holds one open ~10 s). Going on with a new producer",
                config.instanceId(), config.instanceId(), memberId, ProducerConfig.TRANSACTION_TIMEOUT_CONFIG);
        metrics.timedOutTransaction();
        transactions.renew();
    }

    /**
     * Pauses the tool-call partitions while too many calls are held, and while results cannot be published (calls read
     * meanwhile would run with nowhere to put their results); polling goes on, so the group never times out.
     */
    private void applyBackpressure() {
        if (closing || System.nanoTime() - resumeFetchingAt < 0 || scheduler.unresolved() >= config.maxInFlight()
                || publishing.cause().isPresent()) {
            consumer.pause(consumer.assignment());
        } else if (!consumer.paused().isEmpty()) {
            consumer.resume(consumer.paused());
        }
        pausedPartitions = consumer.paused().size();
    }

    /** On close: no new calls, running ones get the shutdown grace to finish and be published. */
    private void drain() {
        long deadline = System.nanoTime() + config.shutdownGrace().toNanos();
        applyBackpressure();
        while (scheduler.unresolved() > 0 && System.nanoTime() - deadline < 0) {
            poll();
            flush();
        }
        if (scheduler.unresolved() > 0) {
            LOG.warn("stopping with {} calls unanswered; the next owner of their partitions answers them", scheduler.unresolved());
        }
        scheduler.dropAll();
        flush();
    }

    /** Hands the scheduler's results and start requests to the loop, and wakes it from its poll. */
    private final class ToKafka implements ToolScheduler.Outcomes {
        @Override
        public void resolved(ToolCall call, RecordPosition position, ToolResult result) {
            outbox.add(new ResultOutbox.Answer(call, position, result));
            consumer.wakeup();
        }

        @Override
        public void startRequested(ToolScheduler.ScheduledCall call) {
            outbox.add(new ResultOutbox.StartMarker(call));
            consumer.wakeup();
        }

        @Override
        public void launched(ToolScheduler.ScheduledCall call, long startedAt) {
            notice(call, ControlMessage.toolStarted(call.call.turnId(), call.call.callId(), startedAt));
        }

        @Override
        public void approvalRequested(ToolScheduler.ScheduledCall call) {
            notice(call, ControlMessage.approvalRequested(call.call.turnId(), call.call.callId(), call.call.toolName(),
                    call.call.arguments(), call.askedBecause()));
        }

        @Override
        public void approvalExpired(ToolScheduler.ScheduledCall call, String reason) {
            notice(call, ControlMessage.approval(call.call.turnId(), call.call.callId(), false, reason));
        }

        private void notice(ToolScheduler.ScheduledCall call, ControlMessage message) {
            outbox.add(new ResultOutbox.ControlNotice(call.call, call.position, message));
            consumer.wakeup();
        }
    }

    private void closeQuietly() {
        AutoCloseable ownMetrics = ownsServiceMetrics ? serviceMetrics : null;
        for (AutoCloseable closeable : new AutoCloseable[] {cancels, controlEnds, scheduler, consumer, ledgerReader, transactions, metrics,
                ownMetrics}) {
            closeQuietly(closeable);
        }
    }

    private static void closeQuietly(AutoCloseable closeable) {
        if (closeable != null) {
            try {
                closeable.close();
            } catch (Exception e) {
                LOG.debug("closing {} failed", closeable.getClass().getSimpleName(), e);
            }
        }
    }
}
