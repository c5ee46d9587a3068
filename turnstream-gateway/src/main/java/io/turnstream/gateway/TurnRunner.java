package io.turnstream.gateway;

import io.turnstream.gateway.api.IdempotentStart;
import io.turnstream.gateway.loop.AgentLoop;
import io.turnstream.gateway.loop.ApprovalDecisions;
import io.turnstream.gateway.loop.GatewayMetrics;
import io.turnstream.gateway.loop.LoopWaits;
import io.turnstream.gateway.loop.ThreadAllowances;
import io.turnstream.gateway.loop.TurnProgress;
import io.turnstream.gateway.loop.TurnPublisher;
import io.turnstream.gateway.loop.TurnRegistry;
import io.turnstream.gateway.ownership.PartitionOwnership;
import io.turnstream.gateway.ownership.TurnHistory;
import io.turnstream.gateway.ownership.TurnPartition;
import io.turnstream.gateway.provider.ErrorCodes;
import io.turnstream.gateway.provider.ModelCaller;
import io.turnstream.gateway.provider.ResolvedProvider;
import io.turnstream.gateway.provider.ToolDefinition;
import io.turnstream.gateway.thread.BusyThreadPolicy;
import io.turnstream.gateway.thread.ThreadHistory;
import io.turnstream.gateway.thread.ThreadRebuild;
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.gateway.turn.TurnRequest;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.model.ControlMessage;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.ScopedIds;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.runtime.TraceContext;
import io.turnstream.schema.SchemaRegistryException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the turns of the partitions this gateway owns, each on its own thread: from the start, or,
 * resumed, from what Kafka holds of it. However a turn ends here (complete, error, cancelled, unable
 * to run, handed over, or its resume failing) its registry slot is released and its partition told;
 * unless it goes on at another gateway, the tenant permit it holds here is released too. The turns of one
 * thread run one after another, in the order they were requested; a request that finds its thread busy
 * follows the {@link BusyThreadPolicy}. A request that continues its thread gets the thread's conversation
 * ({@link ThreadHistory}) when it starts.
 */
final class TurnRunner implements PartitionOwnership.Turns, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(TurnRunner.class);
    private static final Duration DELIVERY_TIMEOUT = Duration.ofSeconds(60);

    private final AtomicInteger turnThreads = new AtomicInteger();
    private final ExecutorService turns = Executors.newCachedThreadPool(r -> {
        Thread thread = new Thread(r, "turn-" + turnThreads.incrementAndGet());
        thread.setDaemon(true);
        return thread;
    });
    private final GatewayConfig config;
    private final Providers providers;
    private final Supplier<List<ToolDefinition>> tools;
    private final TurnRegistry registry;
    private final ApprovalDecisions approvals;
    private final ThreadAllowances allowances;
    private final ModelCaller client;
    private final GatewayMetrics metrics;
    private final Consumer<String> permits;
    private final ThreadRebuild history;
    private final BusyThreadPolicy busyPolicy;
    /** Whether Kafka shows a turn already (its lifecycle events). */
    private final Predicate<String> inKafka;
    /** The turn that took the Idempotency-Key of a keyed turn's request, when another request took it first. */
    private final Function<String, Optional<String>> keyTakenBy;
    /** Publishes a command on {@code llm.control}, outside the partition's transactions: an interrupt's cancel. */
    private final Function<ControlMessage, CompletableFuture<Void>> control;
    /** The latest turn requested on each thread of the owned partitions (by tenant's thread key), until it ends. */
    private final Map<String, ThreadTail> tails = new ConcurrentHashMap<>();

    /** A thread's latest turn here: the next turn of the thread waits for {@code ended}. */
    private record ThreadTail(String turnId, TurnRegistry.ActiveTurn active, CompletableFuture<Void> ended) {
    }

    /**
     * @param tools the tools offered to a turn whose request names none
     * @param allowances the tools allowed for the rest of their thread (see {@link ThreadAllowances})
     * @param permits releases the tenant permit a turn accepted here holds, by turn id, once it ended here
     * @param history puts the thread's conversation before a request that continues it
     * @param inKafka whether Kafka shows a turn already (its lifecycle events)
     * @param keyTakenBy the turn that took the {@code Idempotency-Key} of a keyed turn's request first (by Kafka's
     *                   order), when that is another turn; may wait until that order is read, and throws
     *                   {@code SchemaRegistryException} while it cannot be read for now: the turn then cannot run now
     *                   ({@link TurnPartition#cannotRunNow}) rather than run as if it had taken its key
     * @param control publishes a command on {@code llm.control} (not in a partition's transaction), as a user's
     *                cancel is: the cancel of a turn interrupted by a new message to its thread
     */
    TurnRunner(GatewayConfig config, Providers providers, Supplier<List<ToolDefinition>> tools, TurnRegistry registry,
               ApprovalDecisions approvals, ThreadAllowances allowances, ModelCaller client,
               GatewayMetrics metrics, Consumer<String> permits, ThreadRebuild history, BusyThreadPolicy busyPolicy,
               Predicate<String> inKafka, Function<String, Optional<String>> keyTakenBy,
               Function<ControlMessage, CompletableFuture<Void>> control) {
        this.config = config;
        this.providers = providers;
        this.tools = tools;
        this.registry = registry;
        this.approvals = approvals;
        this.allowances = allowances;
        this.client = client;
        this.metrics = metrics;
        this.permits = permits;
        this.history = history;
        this.busyPolicy = busyPolicy;
        this.inKafka = inKafka;
        this.keyTakenBy = keyTakenBy;
        this.control = control;
    }

    /**
     * Called on the ownership thread; the turn runs on its own. A second request for a turn (two gateways took the
     * same {@code Idempotency-Key}, which names the turn) is skipped: the turn runs here or ran already. (A takeover
     * resumes each turn once: {@link io.turnstream.gateway.ownership.OwnedPartitions} reads its first request.)
     */
    @Override
    public void run(TurnRequestRecord record, TraceContext trace, List<TurnRequestRecord> steps, boolean resume,
                    TurnPartition partition, long offset) {
        if (!resume && (registry.status(record.turnId()).isPresent() || inKafka.test(record.turnId()))) {
            LOG.info("turn {} was requested again (the same Idempotency-Key); it runs once", record.turnId());
            return;
        }
        TurnRegistry.ActiveTurn active = registry.register(new TurnStatus(record.turnId(), record.threadId(),
                record.runId(), TurnPhase.RUNNING));
        partition.started(offset, active);
        String thread = ScopedIds.threadKey(record.tenantId(), record.threadId());
        ThreadTail mine = new ThreadTail(record.turnId(), active, new CompletableFuture<>());
        ThreadTail before = tails.put(thread, mine);
        ThreadTail running = before != null && !before.ended().isDone() ? before : null;
        try {
            turns.execute(() -> {
                try {
                    Optional<String> keyTaken = !resume && IdempotentStart.keyed(record.request())
                            ? keyTakenBy.apply(record.turnId()) : Optional.empty();
                    if (keyTaken.isPresent()) {
                        endUnrunnable(record, trace, steps, resume, partition, active, ErrorInfo.of(
                                ErrorCodes.IDEMPOTENCY_KEY_REUSED, "another request under the same Idempotency-Key "
                                        + "took it first (turn " + keyTaken.get() + ")"));
                    } else if (running == null || awaitTurnBefore(running, record, resume, active)) {
                        // a turn cancelled while it waited ends at once: it needs no conversation
                        runHere(record, trace, steps, resume, partition, active, offset, active.cancel.isCancelled()
                                ? Optional.empty() : Optional.ofNullable(before).map(ThreadTail::turnId));
                    } else if (!active.handover.isDone()) {
                        endUnrunnable(record, trace, steps, resume, partition, active, ErrorInfo.of(
                                ErrorCodes.THREAD_BUSY, "thread " + record.threadId() + " was running turn "
                                        + running.turnId() + " (" + BusyThreadPolicy.KEY + " is reject)"));
                    } else {
                        registry.release(record.turnId());
                    }
                } catch (SchemaRegistryException registryDown) {
                    cannotRunNow(record, partition, active, registryDown);
                } catch (RuntimeException e) {
                    LOG.error("cannot resume turn {}; leaving it to the partition's next owner", record.turnId(), e);
                    active.handover.complete(null);
                    registry.release(record.turnId());
                } finally {
                    endTail(thread, mine, before);
                    partition.stopped(offset, record.turnId(), active.handover.isDone());
                    if (!active.handover.isDone()) {
                        permits.accept(record.turnId());
                    }
                }
            });
        } catch (RejectedExecutionException shuttingDown) {
            endTail(thread, mine, before);
            active.handover.complete(null);
            registry.release(record.turnId());
            partition.stopped(offset, record.turnId(), true);
        }
    }

    /**
     * A resumed turn of which Kafka holds a record that cannot be used (dead-lettered by the ownership loop): it ends
     * at once with {@code turn_error} ({@code TURN_CANNOT_RUN}), its permit released, rather than calling a step again
     * or failing at every next owner the same way.
     */
    @Override
    public void endUnresumable(TurnRequestRecord record, TraceContext trace, List<TurnRequestRecord> steps,
                               TurnPartition partition, long offset, String why) {
        TurnRegistry.ActiveTurn active = registry.register(new TurnStatus(record.turnId(), record.threadId(),
                record.runId(), TurnPhase.RUNNING));
        partition.started(offset, active);
        try {
            turns.execute(() -> {
                try {
                    endUnrunnable(record, trace, steps, true, partition, active,
                            ErrorInfo.of(ErrorCodes.TURN_CANNOT_RUN, "the turn cannot be resumed: " + why));
                } catch (SchemaRegistryException registryDown) {
                    cannotRunNow(record, partition, active, registryDown);
                } catch (RuntimeException e) {
                    LOG.error("cannot end turn {}; leaving it to the partition's next owner", record.turnId(), e);
                    active.handover.complete(null);
                    registry.release(record.turnId());
                } finally {
                    partition.stopped(offset, record.turnId(), active.handover.isDone());
                    if (!active.handover.isDone()) {
                        permits.accept(record.turnId());
                    }
                }
            });
        } catch (RejectedExecutionException shuttingDown) {
            active.handover.complete(null);
            registry.release(record.turnId());
            partition.stopped(offset, record.turnId(), true);
        }
    }

    /**
     * What Kafka holds of the turn cannot be read for now (on Avro, a schema registry that cannot be reached): not its
     * records' fault, so it does not end with an error. It stops here handed over, and its partition is taken over
     * again after a backoff, which resumes it ({@link TurnPartition#cannotRunNow}).
     */
    private void cannotRunNow(TurnRequestRecord record, TurnPartition partition, TurnRegistry.ActiveTurn active,
                              SchemaRegistryException why) {
        LOG.warn("turn {} cannot run now ({}); its partition is taken over again after a backoff", record.turnId(),
                why.getMessage());
        partition.cannotRunNow(record.turnId(), why);
        active.handover.complete(null);
        registry.release(record.turnId());
    }

    /**
     * The turn stopped; the thread's next turn may start once the turn before it has ended too (a turn cancelled
     * while it waited stops before the turn it waited for).
     */
    private void endTail(String thread, ThreadTail mine, ThreadTail before) {
        CompletableFuture<Void> earlier = before == null ? CompletableFuture.completedFuture(null) : before.ended();
        earlier.whenComplete((done, error) -> {
            tails.remove(thread, mine);
            mine.ended().complete(null);
        });
    }

    /**
     * A turn whose thread is busy here: under {@code reject} a new request is refused (false); otherwise it waits
     * for the running turn to end (under {@code interrupt}, cancelled first), for its own cancel, or for its own
     * handover (false). A resumed turn was accepted before: it always waits.
     */
    private boolean awaitTurnBefore(ThreadTail running, TurnRequestRecord record, boolean resume,
                                    TurnRegistry.ActiveTurn active) {
        if (!resume && busyPolicy == BusyThreadPolicy.REJECT) {
            return false;
        }
        if (!resume && busyPolicy == BusyThreadPolicy.INTERRUPT) {
            interrupt(running);
        }
        LOG.info("turn {} waits for turn {} of its thread to end", record.turnId(), running.turnId());
        CompletableFuture.anyOf(running.ended(), active.handover, active.cancel.future()).join();
        return !active.handover.isDone();
    }

    /**
     * Cancels the running turn as a user's cancel does, on {@code llm.control} first, then here without waiting for
     * the inbox to read it back. Cancelled here only, its {@code aborted} end would live in the partition's open
     * transaction alone: a refused commit or a handover drops it, and the next owner, which resumes this turn without
     * interrupting anything (it was accepted before), would run the interrupted turn to its end. On
     * {@code llm.control} before the turn ends, the next owner's takeover reads it ({@code TurnResumer}).
     */
    private void interrupt(ThreadTail running) {
        ControlMessage cancel = ControlMessage.cancel(running.turnId(), BusyThreadPolicy.INTERRUPTED);
        try {
            control.apply(cancel).get(DELIVERY_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            LOG.error("the interrupt of turn {} could not be published on llm.control; it is cancelled here only: {}",
                    running.turnId(), e.getMessage());
        }
        running.active().cancel.cancel(BusyThreadPolicy.INTERRUPTED);
    }

    private void runHere(TurnRequestRecord record, TraceContext trace, List<TurnRequestRecord> steps, boolean resume,
                         TurnPartition partition, TurnRegistry.ActiveTurn active, long offset,
                         Optional<String> turnBefore) {
        AgentLoop.Turn turn;
        try {
            turn = turnOf(record, trace, offset, turnBefore);
        } catch (SchemaRegistryException notNow) {
            // the thread's history cannot be read for now: not a turn that cannot run (see cannotRunNow)
            throw notNow;
        } catch (RuntimeException cannotRun) {
            endUnrunnable(record, trace, steps, resume, partition, active,
                    ErrorInfo.of(ErrorCodes.TURN_CANNOT_RUN, "the turn cannot run: " + cannotRun.getMessage()));
            return;
        }
        TurnProgress progress;
        try {
            progress = resume ? partition.history().progress(record, steps, turn.provider().model(), active)
                    : TurnProgress.fresh(turn.provider().model());
        } catch (TurnHistory.UnreadableRecords unreadable) {
            // once its end is written, the next takeover finds the turn ended rather than resuming it again
            endUnrunnable(record, trace, steps, resume, partition, active, ErrorInfo.of(ErrorCodes.TURN_CANNOT_RUN,
                    "the turn cannot be resumed: " + unreadable.getMessage()));
            return;
        }
        if (progress.endedStatus() != null) {
            registry.finish(turn.turnId(), TurnPhase.endedAs(progress.endedStatus()));
            return;
        }
        if (resume) {
            metrics.increment(GatewayMetrics.Counter.TURNS_RESUMED);
            approvals.showAwaiting(turn.turnId(), progress, active);
        }
        TurnPublisher publisher = partition.publisherFor(record, trace);
        new AgentLoop(turn, progress, active, registry, publisher, client, LoopWaits.blocking(publisher.clock()), metrics,
                config.loop(), allowances).run();
    }

    /** The request as accepted (validated then; trusted now), with this gateway's defaults and provider. */
    private AgentLoop.Turn turnOf(TurnRequestRecord record, TraceContext trace, long offset, Optional<String> turnBefore) {
        TurnRequest request = history.rebuild(record, TurnRequest.read(record.request()), offset, turnBefore);
        ResolvedProvider provider = providers.resolve(request.provider(), request.model());
        return new AgentLoop.Turn(record.turnId(), record.threadId(), record.runId(), provider,
                request.fallbackModel() != null ? request.fallbackModel() : config.fallbackModel(), request.system(),
                request.conversation(), request.prompt(), offered(request),
                request.maxSteps() != null ? request.maxSteps() : config.maxSteps(), trace, record.tenantId(),
                request.clientTools().stream().map(ToolDefinition::name).collect(Collectors.toSet()));
    }

    /**
     * A turn that cannot run on this gateway (its provider is not configured here, its request cannot be
     * read, its thread is busy) ends at once with {@code response_error} ({@code turn_error} on
     * {@code llm.upserts}): every reader sees it end, and the gateway that accepted it releases its permit.
     * The error carries the usage of the steps an earlier owner completed, as their checkpoints hold it.
     */
    private void endUnrunnable(TurnRequestRecord record, TraceContext trace, List<TurnRequestRecord> steps,
                               boolean resume, TurnPartition partition, TurnRegistry.ActiveTurn active,
                               ErrorInfo why) {
        LOG.error("turn {} cannot run here and ends with an error: {}", record.turnId(), why.message());
        String model = record.request() == null ? null : record.request().path("model").asText(null);
        TurnProgress progress = readableProgress(record, steps, model, resume, partition, active);
        if (progress.endedStatus() == null) {
            TurnPublisher publisher = partition.publisherFor(record, trace);
            if (!progress.started()) {
                String provider = record.request() == null ? null : record.request().path("provider").asText(null);
                publisher.rawEvent(record.runId(), trace, new StreamPayload.ResponseStart(record.runId(),
                        record.turnId(), record.threadId(), null, model, provider, publisher.clock().millis(),
                        record.tenantId()));
            }
            // a turn taken over carries what its steps so far used (their checkpoints'): it is spent all the same
            awaitDelivery(publisher.rawEvent(record.runId(), trace, new StreamPayload.ResponseError(record.runId(), why,
                    progress.usage(), progress.failedUsage())));
            metrics.increment(GatewayMetrics.Counter.TURNS_FAILED);
        }
        registry.finish(record.turnId(), progress.endedStatus() != null
                ? TurnPhase.endedAs(progress.endedStatus()) : TurnPhase.ERROR);
    }

    /** How far the turn got, by the records that can be read: it ends with an error either way. */
    private static TurnProgress readableProgress(TurnRequestRecord record, List<TurnRequestRecord> steps, String model,
                                                 boolean resume, TurnPartition partition,
                                                 TurnRegistry.ActiveTurn active) {
        if (!resume) {
            return TurnProgress.fresh(model);
        }
        try {
            return partition.history().progress(record, steps, model, active);
        } catch (TurnHistory.UnreadableRecords unreadable) {
            return unreadable.readable();
        }
    }

    private static void awaitDelivery(CompletableFuture<Void> sent) {
        try {
            sent.get(DELIVERY_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            LOG.error("the end of a turn that cannot run may not have reached Kafka: {}", e.getMessage());
        }
    }

    /** The request's tools (else the executor's), and its client-side tools, which win a name both have. */
    private List<ToolDefinition> offered(TurnRequest request) {
        List<ToolDefinition> server = request.tools() != null ? request.tools() : tools.get();
        if (request.clientTools().isEmpty()) {
            return server;
        }
        Set<String> clientNames = request.clientTools().stream().map(ToolDefinition::name).collect(Collectors.toSet());
        List<ToolDefinition> all = new ArrayList<>(request.clientTools());
        server.stream().filter(tool -> !clientNames.contains(tool.name())).forEach(all::add);
        return all;
    }

    /** Lets running turns stop (the ownership loop has asked them to hand over), up to 30 s. */
    @Override
    public void close() {
        turns.shutdown();
        try {
            if (!turns.awaitTermination(30, TimeUnit.SECONDS)) {
                LOG.warn("some turns did not stop within 30 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
