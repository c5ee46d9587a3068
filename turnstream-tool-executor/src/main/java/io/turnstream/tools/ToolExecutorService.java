package io.turnstream.tools;

import io.turnstream.model.ControlMessage;
import io.turnstream.model.DeadLetterHeaders;
import io.turnstream.model.ToolCall;
import io.turnstream.model.ToolResult;
import io.turnstream.model.Topics;
import io.turnstream.model.WireFormat;
import io.turnstream.schema.WireFormats;
import io.turnstream.runtime.ServiceMetrics;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.TraceContext;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.FencedInstanceIdException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

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
    private final Topics topics;
    private final WireFormat wire;
    private final Clock clock;
    private final CallLedger ledger;
    private final OffsetTracker offsets = new OffsetTracker();
    private final Queue<Outgoing> outgoing = new ConcurrentLinkedQueue<>();
    /** The trace context of each call read and not yet answered, copied onto its result's headers. */
    private final Map<RecordPosition, TraceContext> traces = new ConcurrentHashMap<>();
    private final CompletableFuture<Void> stopped = new CompletableFuture<>();

    private ToolExecutorMetrics metrics;
    private ServiceMetrics serviceMetrics;
    private boolean ownsServiceMetrics;
    private AutoCloseable producerMetrics;
    private ToolScheduler scheduler;
    private KafkaProducer<String, byte[]> producer;
    private KafkaConsumer<String, byte[]> consumer;
    private KafkaConsumer<String, byte[]> ledgerReader;
    private CancelListener cancels;
    private Thread loop;
    private volatile boolean closing;
    /** What made a helper of the loop (the cancel listener) stop for good; the executor stops with it. */
    private volatile Throwable helperFailure;
    private volatile int pausedPartitions;
    /** Deadlines of the loop, in {@link System#nanoTime()}: intervals, not moments, so not from the clock. */
    private long nextSweep = System.nanoTime();
    private int failuresInARow;
    private long resumeFetchingAt = System.nanoTime();

    /** What the loop publishes in its next transaction. */
    private sealed interface Outgoing permits Answer, StartMarker, ControlNotice, DeadLetter {
    }

    private record Answer(ToolCall call, RecordPosition position, ToolResult result) implements Outgoing {
    }

    private record StartMarker(ToolScheduler.ScheduledCall call) implements Outgoing {
    }

    /**
     * Tells the gateway running the turn what happens to a call, on the control topic: it runs now
     * ({@code tool_started}), waits for approval ({@code approval_requested}) or was denied for want of
     * a decision ({@code approval} with approved false).
     */
    private record ControlNotice(ToolCall call, RecordPosition position, ControlMessage message) implements Outgoing {
    }

    private record DeadLetter(ConsumerRecord<String, byte[]> record, RecordPosition position, String reason) implements Outgoing {
    }

    public ToolExecutorService(Settings settings, ToolRegistry registry) {
        this(settings, registry, WireFormats.from(settings));
    }

    public ToolExecutorService(Settings settings, ToolRegistry registry, WireFormat wire) {
        this.settings = settings;
        this.registry = registry;
        this.config = ToolExecutorConfig.from(settings);
        this.topics = settings.topics();
        this.wire = wire;
        this.clock = settings.clock();
        this.ledger = new CallLedger(config.ledgerTopic(), clock);
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
            producer = new KafkaProducer<>(producerProperties(), new StringSerializer(), new ByteArraySerializer());
            producer.initTransactions();
            producerMetrics = serviceMetrics.bind(producer);
            consumer = new KafkaConsumer<>(groupConsumerProperties(), new StringDeserializer(), new ByteArrayDeserializer());
            serviceMetrics.bind(consumer);
            ledgerReader = new KafkaConsumer<>(plainConsumerProperties("ledger"), new StringDeserializer(), new ByteArrayDeserializer());
            cancels = new CancelListener(plainConsumerProperties("cancels"), topics.control(), wire,
                    clock.instant().minus(config.turnMemory()), scheduler::cancelTurn, scheduler::decide, this::stopOn).start();
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
            consumer.subscribe(List.of(topics.toolCalls()), new Rebalance());
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
        for (ConsumerRecord<String, byte[]> record : poll()) {
            accept(record);
        }
        flush();
        applyBackpressure();
        if (System.nanoTime() - nextSweep >= 0) {
            scheduler.sweep();
            ledger.prune(offsets.lastCommitted());
            nextSweep = System.nanoTime() + SWEEP_EVERY.toNanos();
        }
    }

    private ConsumerRecords<String, byte[]> poll() {
        try {
            return consumer.poll(POLL);
        } catch (WakeupException e) {
            // a result is ready, or close() was called
            return ConsumerRecords.empty();
        }
    }

    private void accept(ConsumerRecord<String, byte[]> record) {
        RecordPosition position = new RecordPosition(new TopicPartition(record.topic(), record.partition()), record.offset());
        offsets.read(position);
        ToolCall call;
        try {
            call = wire.read(record.topic(), record.value(), ToolCall.class);
        } catch (IOException | IllegalArgumentException e) {
            deadLetter(record, position, "not a ToolCall: " + e.getMessage());
            return;
        }
        if (call.callId() == null || call.callId().isBlank()) {
            deadLetter(record, position, "ToolCall without a callId");
            return;
        }
        if (call.turnId() == null) {
            if (record.key() == null) {
                deadLetter(record, position, "ToolCall without a turnId or record key");
                return;
            }
            call = new ToolCall(call.callId(), record.key(), call.threadId(), call.runId(), call.itemId(), call.toolName(),
                    call.arguments(), call.requestedAt(), call.tenantId());
        }
        MDC.put("turnId", call.turnId());
        try {
            CallLedger.Mark mark = ledger.markOf(position, call.callId());
            if (mark == CallLedger.Mark.COMPLETED || ledger.seenBefore(position, call.callId())) {
                LOG.info("call {} at offset {} was answered or is in progress already; not run again", call.callId(), record.offset());
                offsets.answered(position);
            } else if (mark == CallLedger.Mark.STARTED) {
                rememberTrace(record, position);
                LOG.warn("call {} of non-idempotent tool {} was started before a restart; answering outcome unknown",
                        call.callId(), call.toolName());
                outgoing.add(new Answer(call, position, ToolResults.refusal(call, ToolErrors.OUTCOME_UNKNOWN,
                        "Tool " + call.toolName() + " was started before the tool executor restarted, and its outcome is "
                                + "unknown: it was not run again because it is not idempotent. Check its effects before "
                                + "calling it again.", clock.millis())));
            } else {
                rememberTrace(record, position);
                scheduler.submit(call, position);
            }
        } finally {
            MDC.remove("turnId");
        }
    }

    /** A call that will be answered: its result carries the call's trace context. */
    private void rememberTrace(ConsumerRecord<String, byte[]> record, RecordPosition position) {
        TraceContext trace = TraceContext.fromHeaders(record.headers());
        if (trace != null) {
            traces.put(position, trace);
        }
    }

    private void deadLetter(ConsumerRecord<String, byte[]> record, RecordPosition position, String reason) {
        LOG.warn("dead-lettering tool-call record {}-{}@{}: {}", record.topic(), record.partition(), record.offset(), reason);
        outgoing.add(new DeadLetter(record, position, reason));
    }

    /** Publishes everything ready in one transaction with the offsets it completes; rewinds when that fails. */
    private void flush() {
        List<Outgoing> batch = new ArrayList<>();
        for (Outgoing item; (item = outgoing.poll()) != null; ) {
            batch.add(item);
            if (item instanceof Answer answer) {
                offsets.answered(answer.position());
            } else if (item instanceof DeadLetter letter) {
                offsets.answered(letter.position());
            }
        }
        // a call dropped or aborted before its started marker went out never runs: no marker for it
        batch.removeIf(item -> item instanceof StartMarker marker && marker.call().resolved());
        Map<TopicPartition, OffsetAndMetadata> commit = offsets.committable();
        if (batch.isEmpty() && commit.isEmpty()) {
            return;
        }
        try {
            producer.beginTransaction();
            for (Outgoing item : batch) {
                send(item);
            }
            if (!commit.isEmpty()) {
                producer.sendOffsetsToTransaction(commit, consumer.groupMetadata());
            }
            commitTransaction();
        } catch (ProducerFencedException | FencedInstanceIdException e) {
            throw e;
        } catch (KafkaException e) {
            recover(e);
            return;
        }
        failuresInARow = 0;
        offsets.committed(commit);
        for (Outgoing item : batch) {
            if (item instanceof Answer answer) {
                ledger.committed(answer.call(), answer.position(), CallLedger.Mark.COMPLETED);
                metrics.record(answer.result());
            } else if (item instanceof StartMarker marker) {
                ledger.committed(marker.call().call, marker.call().position, CallLedger.Mark.STARTED);
                scheduler.launch(marker.call());
            } else if (item instanceof DeadLetter) {
                metrics.deadLettered();
            }
        }
    }

    private void send(Outgoing item) {
        if (item instanceof Answer answer) {
            ProducerRecord<String, byte[]> result = new ProducerRecord<>(topics.toolResults(), answer.call().turnId(),
                    wire.write(topics.toolResults(), answer.result()));
            TraceContext trace = traces.remove(answer.position());
            if (trace != null) {
                trace.addTo(result.headers());
            }
            producer.send(result);
            producer.send(ledger.record(answer.call(), answer.position(), CallLedger.Mark.COMPLETED));
        } else if (item instanceof StartMarker marker) {
            producer.send(ledger.record(marker.call().call, marker.call().position, CallLedger.Mark.STARTED));
        } else if (item instanceof ControlNotice notice) {
            producer.send(new ProducerRecord<>(topics.control(), notice.call().turnId(),
                    wire.write(topics.control(), notice.message())));
        } else if (item instanceof DeadLetter letter) {
            ConsumerRecord<String, byte[]> source = letter.record();
            ProducerRecord<String, byte[]> record = new ProducerRecord<>(config.deadLetterTopic(), source.key(), source.value());
            record.headers().add(new RecordHeader(DeadLetterHeaders.REASON, letter.reason().getBytes(StandardCharsets.UTF_8)));
            record.headers().add(new RecordHeader(DeadLetterHeaders.SOURCE,
                    (source.topic() + "-" + source.partition() + "@" + source.offset()).getBytes(StandardCharsets.UTF_8)));
            producer.send(record);
        }
    }

    /** A commit that timed out (broker unreachable) may still complete: Kafka wants it retried, not aborted. */
    private void commitTransaction() {
        while (true) {
            try {
                producer.commitTransaction();
                return;
            } catch (TimeoutException e) {
                if (closing) {
                    throw e;
                }
                LOG.warn("committing results timed out, retrying: {}", e.getMessage());
            }
        }
    }

    /**
     * A transaction failed: nothing of it is visible. Abort it (or replace the producer when it cannot),
     * drop the work in flight and read again from the committed offsets; the ledger skips what was answered.
     */
    private void recover(KafkaException cause) {
        failuresInARow++;
        LOG.warn("publishing results failed ({}); rewinding to the last committed offsets", cause.toString());
        try {
            producer.abortTransaction();
        } catch (ProducerFencedException | FencedInstanceIdException e) {
            throw e;
        } catch (KafkaException e) {
            replaceProducer();
        }
        rewind(consumer.assignment());
        // hold fetching for a while (still polling, so the group membership stays), longer after each failure
        resumeFetchingAt = System.nanoTime()
                + Duration.ofMillis(Math.min(MAX_BACKOFF.toMillis(), 100L << Math.min(failuresInARow, 10))).toNanos();
    }

    /** A new producer with the same transactional id, which aborts whatever the old one left open. */
    private void replaceProducer() {
        producer.close(Duration.ZERO);
        closeQuietly(producerMetrics);
        while (true) {
            producer = new KafkaProducer<>(producerProperties(), new StringSerializer(), new ByteArraySerializer());
            try {
                producer.initTransactions();
                producerMetrics = serviceMetrics.bind(producer);
                return;
            } catch (TimeoutException e) {
                producer.close(Duration.ZERO);
                if (closing) {
                    throw e;
                }
                LOG.warn("cannot reach the transaction coordinator, retrying: {}", e.getMessage());
            }
        }
    }

    private void rewind(Collection<TopicPartition> partitions) {
        scheduler.dropAll();
        outgoing.clear();
        traces.clear();
        ledger.forgetSeen();
        offsets.clear();
        Map<TopicPartition, OffsetAndMetadata> committed = committed(partitions);
        for (TopicPartition partition : partitions) {
            OffsetAndMetadata offset = committed.get(partition);
            if (offset == null) {
                consumer.seekToBeginning(List.of(partition));
            } else {
                consumer.seek(partition, offset.offset());
            }
        }
    }

    /** Pauses the tool-call partitions while too many calls are held; polling goes on, so the group never times out. */
    private void applyBackpressure() {
        if (closing || System.nanoTime() - resumeFetchingAt < 0 || scheduler.unresolved() >= config.maxInFlight()) {
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

    private Map<TopicPartition, OffsetAndMetadata> committed(Collection<TopicPartition> partitions) {
        while (true) {
            try {
                Map<TopicPartition, OffsetAndMetadata> committed = new HashMap<>(consumer.committed(new java.util.HashSet<>(partitions)));
                committed.values().removeIf(java.util.Objects::isNull);
                return committed;
            } catch (WakeupException resultReady) {
                // a wakeup meant for poll() landed here: ask again
            } catch (TimeoutException e) {
                if (closing) {
                    throw e;
                }
                LOG.warn("cannot read the committed offsets, retrying: {}", e.getMessage());
            }
        }
    }

    /** Hands the scheduler's results and start requests to the loop, and wakes it from its poll. */
    private final class ToKafka implements ToolScheduler.Outcomes {
        @Override
        public void resolved(ToolCall call, RecordPosition position, ToolResult result) {
            outgoing.add(new Answer(call, position, result));
            consumer.wakeup();
        }

        @Override
        public void startRequested(ToolScheduler.ScheduledCall call) {
            outgoing.add(new StartMarker(call));
            consumer.wakeup();
        }

        @Override
        public void launched(ToolScheduler.ScheduledCall call, long startedAt) {
            outgoing.add(new ControlNotice(call.call, call.position,
                    ControlMessage.toolStarted(call.call.turnId(), call.call.callId(), startedAt)));
            consumer.wakeup();
        }

        @Override
        public void approvalRequested(ToolScheduler.ScheduledCall call) {
            outgoing.add(new ControlNotice(call.call, call.position,
                    ControlMessage.approvalRequested(call.call.turnId(), call.call.callId())));
            consumer.wakeup();
        }

        @Override
        public void approvalExpired(ToolScheduler.ScheduledCall call, String reason) {
            outgoing.add(new ControlNotice(call.call, call.position,
                    ControlMessage.approval(call.call.turnId(), call.call.callId(), false, reason)));
            consumer.wakeup();
        }
    }

    private final class Rebalance implements ConsumerRebalanceListener {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            if (!partitions.isEmpty()) {
                // stop first, so nothing starts that the new owner would have to call "outcome unknown";
                // then publish what was answered while these partitions are still ours
                scheduler.dropPartitions(partitions);
                flush();
                forget(partitions);
            }
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            forget(partitions);
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            if (partitions.isEmpty()) {
                return;
            }
            Map<TopicPartition, Long> from = new HashMap<>();
            Map<TopicPartition, OffsetAndMetadata> committed = committed(partitions);
            partitions.forEach(partition -> from.put(partition,
                    committed.containsKey(partition) ? committed.get(partition).offset() : 0L));
            ledger.restore(ledgerReader, from);
        }

        private void forget(Collection<TopicPartition> partitions) {
            scheduler.dropPartitions(partitions);
            outgoing.removeIf(item -> partitions.contains(positionOf(item).partition()));
            traces.keySet().removeIf(position -> partitions.contains(position.partition()));
            ledger.forget(partitions);
            offsets.forget(partitions);
        }
    }

    private static RecordPosition positionOf(Outgoing item) {
        if (item instanceof Answer answer) {
            return answer.position();
        }
        if (item instanceof StartMarker marker) {
            return marker.call().position;
        }
        if (item instanceof ControlNotice notice) {
            return notice.position();
        }
        return ((DeadLetter) item).position();
    }

    private Properties producerProperties() {
        Properties props = settings.kafkaProperties();
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, config.groupId() + "-" + config.instanceId());
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(CommonClientConfigs.CLIENT_ID_CONFIG, "turnstream-tool-executor-" + config.instanceId());
        return props;
    }

    private Properties groupConsumerProperties() {
        Properties props = settings.kafkaProperties();
        props.put(ConsumerConfig.GROUP_ID_CONFIG, config.groupId());
        props.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, config.instanceId());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.putIfAbsent(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.putIfAbsent(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, Integer.toString(Math.min(500, config.maxInFlight())));
        if ("classic".equalsIgnoreCase(props.getProperty(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic"))) {
            // revoke only the partitions that move, so a rebalance does not stop every running call
            props.putIfAbsent(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName());
        }
        // its own client id: the producer's metrics (and the broker's logs) stay apart from the consumer's
        props.put(CommonClientConfigs.CLIENT_ID_CONFIG, "turnstream-tool-executor-" + config.instanceId() + "-calls");
        return props;
    }

    /** For the ledger reader and the cancel listener: assigned partitions, no group. */
    private Properties plainConsumerProperties(String role) {
        Properties props = settings.kafkaProperties();
        props.remove(ConsumerConfig.GROUP_ID_CONFIG);
        props.remove(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(CommonClientConfigs.CLIENT_ID_CONFIG, "turnstream-tool-executor-" + config.instanceId() + "-" + role);
        return props;
    }

    private void closeQuietly() {
        // a producer that cannot reach the broker would wait forever for its unsent records: they are not needed
        AutoCloseable producerClose = producer == null ? null : () -> producer.close(Duration.ofSeconds(5));
        AutoCloseable ownMetrics = ownsServiceMetrics ? serviceMetrics : null;
        for (AutoCloseable closeable : new AutoCloseable[] {cancels, scheduler, consumer, ledgerReader, producerClose, metrics,
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
