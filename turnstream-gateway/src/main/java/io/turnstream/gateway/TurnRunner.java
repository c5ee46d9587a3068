package io.turnstream.gateway;

import io.turnstream.gateway.loop.AgentLoop;
import io.turnstream.gateway.loop.ApprovalDecisions;
import io.turnstream.gateway.loop.GatewayMetrics;
import io.turnstream.gateway.loop.TurnProgress;
import io.turnstream.gateway.loop.TurnRegistry;
import io.turnstream.gateway.ownership.OwnedPartition;
import io.turnstream.gateway.ownership.PartitionOwnership;
import io.turnstream.gateway.ownership.TurnResumer;
import io.turnstream.gateway.provider.ProviderClient;
import io.turnstream.gateway.provider.ResolvedProvider;
import io.turnstream.gateway.provider.ToolDefinition;
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.gateway.turn.TurnRequest;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.model.Json;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.runtime.TraceContext;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the turns of the partitions this gateway owns, each on its own thread: from the start, or,
 * resumed, from what Kafka holds of it.
 */
final class TurnRunner implements PartitionOwnership.Turns, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(TurnRunner.class);

    private final AtomicInteger turnThreads = new AtomicInteger();
    private final ExecutorService turns = Executors.newCachedThreadPool(r -> {
        Thread thread = new Thread(r, "turn-" + turnThreads.incrementAndGet());
        thread.setDaemon(true);
        return thread;
    });
    private final GatewayConfig config;
    private final Providers providers;
    private final ToolCatalog tools;
    private final TurnRegistry registry;
    private final ApprovalDecisions approvals;
    private final TurnResumer resumer;
    private final ProviderClient client;
    private final GatewayMetrics metrics;
    private final TurnAdmission admission;

    TurnRunner(GatewayConfig config, Providers providers, ToolCatalog tools, TurnRegistry registry,
               ApprovalDecisions approvals, TurnResumer resumer, ProviderClient client, GatewayMetrics metrics,
               TurnAdmission admission) {
        this.config = config;
        this.providers = providers;
        this.tools = tools;
        this.registry = registry;
        this.approvals = approvals;
        this.resumer = resumer;
        this.client = client;
        this.metrics = metrics;
        this.admission = admission;
    }

    /** Called on the ownership thread; the turn runs on its own. */
    @Override
    public void run(TurnRequestRecord record, TraceContext trace, List<TurnRequestRecord> steps, boolean resume,
                    OwnedPartition partition, long offset) {
        AgentLoop.Turn turn;
        try {
            TurnRequest request = TurnRequest.parse(Json.toString(record.request()));
            ResolvedProvider provider = providers.resolve(request.provider(), request.model());
            turn = new AgentLoop.Turn(record.turnId(), record.threadId(), record.runId(), provider,
                    request.fallbackModel() != null ? request.fallbackModel() : config.fallbackModel(), request.system(),
                    request.conversation(), request.prompt(), request.tools() != null ? request.tools() : toolsToOffer(),
                    request.maxSteps() != null ? request.maxSteps() : config.maxSteps(), trace, record.tenantId());
        } catch (RuntimeException e) {
            LOG.error("turn {} cannot run here and is skipped: {}", record.turnId(), e.getMessage());
            partition.alreadyFinished(offset);
            return;
        }
        TurnRegistry.ActiveTurn active = registry.register(new TurnStatus(turn.turnId(), turn.threadId(), turn.runId(),
                TurnPhase.RUNNING));
        partition.started(offset, active);
        try {
            turns.execute(() -> {
                try {
                    TurnProgress progress = resume
                            ? resumer.progress(record, steps, turn.provider().model(), active)
                            : TurnProgress.fresh(turn.provider().model());
                    if (progress.endedStatus() != null) {
                        registry.finish(turn.turnId(), TurnPhase.endedAs(progress.endedStatus()));
                    } else {
                        if (resume) {
                            metrics.increment(GatewayMetrics.Counter.TURNS_RESUMED);
                            approvals.showAwaiting(turn.turnId(), progress, active);
                        }
                        new AgentLoop(turn, progress, active, registry, partition.publisherFor(record, trace), client,
                                metrics, config.loop()).run();
                    }
                } catch (RuntimeException e) {
                    LOG.error("cannot resume turn {}; leaving it to the partition's next owner", turn.turnId(), e);
                    active.handover.complete(null);
                    registry.release(turn.turnId());
                } finally {
                    partition.stopped(offset, turn.turnId(), active.handover.isDone());
                    if (!active.handover.isDone()) {
                        admission.ended(turn.turnId());
                    }
                }
            });
        } catch (RejectedExecutionException shuttingDown) {
            active.handover.complete(null);
            registry.release(turn.turnId());
            partition.stopped(offset, turn.turnId(), true);
        }
    }

    private List<ToolDefinition> toolsToOffer() {
        List<ToolDefinition> offered = tools.offered();
        if (offered.isEmpty()) {
            LOG.warn("no tool executor has published its tools on {}: the model is offered no tools", tools.topic());
        }
        return offered;
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
