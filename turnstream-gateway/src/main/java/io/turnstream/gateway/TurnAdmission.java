package io.turnstream.gateway;

import io.turnstream.gateway.api.TurnStarter;
import io.turnstream.gateway.http.ApiError;
import io.turnstream.gateway.http.JsonBody;
import io.turnstream.gateway.loop.GatewayMetrics;
import io.turnstream.gateway.loop.TurnRegistry;
import io.turnstream.gateway.provider.ResolvedProvider;
import io.turnstream.gateway.security.SpendPolicy;
import io.turnstream.gateway.security.TenantLimits;
import io.turnstream.gateway.security.TurnOwnership;
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.gateway.turn.TurnRequest;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.gateway.view.TurnViews;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.runtime.Failures;
import io.turnstream.runtime.TraceContext;
import java.time.Clock;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Admission: where a turn is accepted. A request is checked here, once (its provider resolves, the
 * gateway and the tenant are within their limits), then put on {@code llm.turn-requests}, where it is
 * trusted from then on. The tenant's permit is held until the turn ends, here or on another gateway.
 */
public final class TurnAdmission implements TurnStarter {

    private static final Logger LOG = LoggerFactory.getLogger(TurnAdmission.class);
    /** How long an accepted turn may take to reach {@code llm.turn-requests} before the caller hears 503. */
    static final long ACCEPT_TIMEOUT_MS = 30_000;

    private final int maxConcurrentTurns;
    private final Providers providers;
    private final TurnRegistry registry;
    private final TenantLimits tenantLimits;
    private final SpendPolicy spend;
    private final GatewayProducer producer;
    private final TurnOwnership ownership;
    private final TurnViews views;
    private final GatewayMetrics metrics;
    private final Clock clock;
    /** Tenant permits of turns accepted here, by turn id, until the turn ends (here or on another gateway). */
    private final Map<String, TenantLimits.Permit> permits = new ConcurrentHashMap<>();

    TurnAdmission(int maxConcurrentTurns, Providers providers, TurnRegistry registry, TenantLimits tenantLimits,
                  SpendPolicy spend, GatewayProducer producer, TurnOwnership ownership, TurnViews views, GatewayMetrics metrics,
                  Clock clock) {
        this.maxConcurrentTurns = maxConcurrentTurns;
        this.providers = providers;
        this.registry = registry;
        this.tenantLimits = tenantLimits;
        this.spend = spend;
        this.producer = producer;
        this.ownership = ownership;
        this.views = views;
        this.metrics = metrics;
        this.clock = clock;
    }

    /** Starts a turn of no tenant (the gateway without keys) in a fresh trace. */
    public TurnStatus startTurn(TurnRequest request) {
        return startTurn(request, null, TraceContext.fresh());
    }

    @Override
    public TurnStatus startTurn(TurnRequest request, String tenantId, TraceContext trace) {
        if (request.threadId() != null) {
            // every API that names a thread (a body, a chat id, a header) ends here
            JsonBody.requireId("the thread id", request.threadId());
        }
        ResolvedProvider resolved = providers.resolve(request.provider(), request.model());
        spend.check(tenantId, resolved.name(), resolved.model(), request.maxSteps());
        if (registry.runningCount() >= maxConcurrentTurns) {
            metrics.increment(GatewayMetrics.Counter.TURNS_REJECTED);
            throw new ApiError(429, "the gateway is running its limit of " + maxConcurrentTurns
                    + " turns; try again when one finishes");
        }
        releaseEndedPermits();
        TenantLimits.Permit permit;
        try {
            permit = tenantLimits.acquire(tenantId);
        } catch (ApiError overLimit) {
            metrics.increment(GatewayMetrics.Counter.TURNS_REJECTED);
            throw overLimit;
        }
        String turnId = "turn-" + UUID.randomUUID();
        String runId = "run-" + UUID.randomUUID();
        String threadId = request.threadId() != null ? request.threadId() : "thread-" + UUID.randomUUID();
        try {
            producer.turnRequest(TurnRequestRecord.request(turnId, threadId, runId, tenantId, clock.millis(),
                    request.toJson()), trace).get(ACCEPT_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            permit.release();
            throw new ApiError(503, "the gateway is shutting down");
        } catch (ExecutionException | TimeoutException e) {
            permit.release();
            LOG.error("cannot put turn {} on the turn requests topic: {}", turnId, Failures.describe(e));
            throw new ApiError(503, "the turn could not be queued (Kafka is unavailable); try again");
        }
        permits.put(turnId, permit);
        ownership.accepted(turnId, tenantId);
        metrics.increment(GatewayMetrics.Counter.TURNS_STARTED);
        return new TurnStatus(turnId, threadId, runId, TurnPhase.RUNNING);
    }

    /** A turn ended on this gateway: the permit it holds here, if it was accepted here, is free. */
    void ended(String turnId) {
        TenantLimits.Permit permit = permits.remove(turnId);
        if (permit != null) {
            permit.release();
        }
    }

    /** Permits of turns accepted here that ended, here or, as Kafka shows, on another gateway. */
    private void releaseEndedPermits() {
        permits.forEach((turnId, permit) -> {
            boolean ended = registry.status(turnId).map(status -> status.status().ended())
                    .orElseGet(() -> views.snapshot(turnId, null)
                            .map(snapshot -> snapshot.status().ended()).orElse(false));
            if (ended && permits.remove(turnId, permit)) {
                permit.release();
            }
        });
    }
}
