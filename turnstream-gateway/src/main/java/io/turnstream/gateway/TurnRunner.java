package io.turnstream.gateway;

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
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.gateway.turn.TurnRequest;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.runtime.TraceContext;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the turns of the partitions this gateway owns, each on its own thread: from the start, or,
 * resumed, from what Kafka holds of it. However a turn ends here (complete, error, cancelled, unable
 * to run, handed over, or its resume failing) its registry slot is released and its partition told;
 * unless it goes on at another gateway, the tenant permit it holds here is released too.
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
    private final TurnHistory resumer;
    private final ModelCaller client;
    private final GatewayMetrics metrics;
    private final Consumer<String> permits;

    /**
     * @param tools the tools offered to a turn whose request names none
     * @param allowances the tools allowed for the rest of their thread (see {@link ThreadAllowances})
     * @param permits releases the tenant permit a turn accepted here holds, by turn id, once it ended here
     */
    TurnRunner(GatewayConfig config, Providers providers, Supplier<List<ToolDefinition>> tools, TurnRegistry registry,
               ApprovalDecisions approvals, ThreadAllowances allowances, TurnHistory resumer, ModelCaller client,
               GatewayMetrics metrics, Consumer<String> permits) {
        this.config = config;
        this.providers = providers;
        this.tools = tools;
        this.registry = registry;
        this.approvals = approvals;
        this.allowances = allowances;
        this.resumer = resumer;
        this.client = client;
        this.metrics = metrics;
        this.permits = permits;
    }

    /** Called on the ownership thread; the turn runs on its own. */
    @Override
    public void run(TurnRequestRecord record, TraceContext trace, List<TurnRequestRecord> steps, boolean resume,
                    TurnPartition partition, long offset) {
        TurnRegistry.ActiveTurn active = registry.register(new TurnStatus(record.turnId(), record.threadId(),
                record.runId(), TurnPhase.RUNNING));
        partition.started(offset, active);
        try {
            turns.execute(() -> {
                try {
                    runHere(record, trace, steps, resume, partition, active);
                } catch (RuntimeException e) {
                    LOG.error("cannot resume turn {}; leaving it to the partition's next owner", record.turnId(), e);
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

    private void runHere(TurnRequestRecord record, TraceContext trace, List<TurnRequestRecord> steps, boolean resume,
                         TurnPartition partition, TurnRegistry.ActiveTurn active) {
        AgentLoop.Turn turn;
        try {
            turn = turnOf(record, trace);
        } catch (RuntimeException cannotRun) {
            endUnrunnable(record, trace, steps, resume, partition, active, cannotRun);
            return;
        }
        TurnProgress progress = resume
                ? resumer.progress(record, steps, turn.provider().model(), active)
                : TurnProgress.fresh(turn.provider().model());
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
    private AgentLoop.Turn turnOf(TurnRequestRecord record, TraceContext trace) {
        TurnRequest request = TurnRequest.read(record.request());
        ResolvedProvider provider = providers.resolve(request.provider(), request.model());
        return new AgentLoop.Turn(record.turnId(), record.threadId(), record.runId(), provider,
                request.fallbackModel() != null ? request.fallbackModel() : config.fallbackModel(), request.system(),
                request.conversation(), request.prompt(), offered(request),
                request.maxSteps() != null ? request.maxSteps() : config.maxSteps(), trace, record.tenantId(),
                request.clientTools().stream().map(ToolDefinition::name).collect(Collectors.toSet()));
    }

    /**
     * A turn that cannot run on this gateway (its provider is not configured here, or its request cannot be
     * read) ends at once with {@code response_error} ({@code turn_error} on {@code llm.upserts}): every
     * reader sees it end, and the gateway that accepted it releases its permit.
     */
    private void endUnrunnable(TurnRequestRecord record, TraceContext trace, List<TurnRequestRecord> steps,
                               boolean resume, TurnPartition partition, TurnRegistry.ActiveTurn active,
                               RuntimeException cause) {
        LOG.error("turn {} cannot run here and ends with an error: {}", record.turnId(), cause.getMessage());
        String model = record.request() == null ? null : record.request().path("model").asText(null);
        TurnProgress progress = resume ? resumer.progress(record, steps, model, active) : TurnProgress.fresh(model);
        if (progress.endedStatus() == null) {
            TurnPublisher publisher = partition.publisherFor(record, trace);
            if (!progress.started()) {
                String provider = record.request() == null ? null : record.request().path("provider").asText(null);
                publisher.rawEvent(record.runId(), trace, new StreamPayload.ResponseStart(record.runId(),
                        record.turnId(), record.threadId(), null, model, provider, publisher.clock().millis(),
                        record.tenantId()));
            }
            awaitDelivery(publisher.rawEvent(record.runId(), trace, new StreamPayload.ResponseError(record.runId(),
                    ErrorInfo.of(ErrorCodes.TURN_CANNOT_RUN, "the turn cannot run: " + cause.getMessage()))));
            metrics.increment(GatewayMetrics.Counter.TURNS_FAILED);
        }
        registry.finish(record.turnId(), progress.endedStatus() != null
                ? TurnPhase.endedAs(progress.endedStatus()) : TurnPhase.ERROR);
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
