package io.turnstream.gateway;

import io.turnstream.gateway.api.IdempotentStart;
import io.turnstream.gateway.api.TurnStarter;
import io.turnstream.gateway.http.ApiError;
import io.turnstream.gateway.http.JsonBody;
import io.turnstream.gateway.loop.GatewayMetrics;
import io.turnstream.gateway.loop.TurnRegistry;
import io.turnstream.gateway.provider.ResolvedProvider;
import io.turnstream.gateway.security.SpendPolicy;
import io.turnstream.gateway.security.TenantLimits;
import io.turnstream.gateway.security.TurnOwnership;
import io.turnstream.gateway.thread.BusyThreadPolicy;
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.gateway.turn.TurnRequest;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.gateway.view.TurnViews;
import io.turnstream.model.ScopedIds;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.runtime.Failures;
import io.turnstream.runtime.TraceContext;
import java.time.Clock;
import java.util.Map;
import java.util.Optional;
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
 * trusted from then on. The tenant's permit is held until the turn ends, here or on another gateway. Under the
 * {@link BusyThreadPolicy} {@code reject}, a request to a thread whose turn is running is a 409.
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
    private final BusyThreadPolicy busyPolicy;
    /** Turns accepted here, by turn id, until they end (here or on another gateway): the tenant's permit, the thread. */
    private final Map<String, Held> permits = new ConcurrentHashMap<>();

    /** @param threadKey the tenant's thread key ({@link ScopedIds#threadKey}) */
    private record Held(TenantLimits.Permit permit, String threadKey) {
    }

    TurnAdmission(int maxConcurrentTurns, Providers providers, TurnRegistry registry, TenantLimits tenantLimits,
                  SpendPolicy spend, GatewayProducer producer, TurnOwnership ownership, TurnViews views, GatewayMetrics metrics,
                  Clock clock, BusyThreadPolicy busyPolicy) {
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
        this.busyPolicy = busyPolicy;
    }

    /** Starts a turn of no tenant (the gateway without keys) in a fresh trace. */
    public TurnStatus startTurn(TurnRequest request) {
        return startTurn(request, null, TraceContext.fresh(), null);
    }

    @Override
    public TurnStatus startTurn(TurnRequest request, String tenantId, TraceContext trace, IdempotentStart idempotent) {
        if (request.threadId() != null) {
            // every API that names a thread (a body, a chat id, a header) ends here
            JsonBody.requireId("the thread id", request.threadId());
            if (busyPolicy == BusyThreadPolicy.REJECT) {
                rejectIfBusy(request.threadId(), tenantId);
            }
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
        String turnId = idempotent != null ? idempotent.turnId() : "turn-" + UUID.randomUUID();
        String runId = idempotent != null ? idempotent.runId() : "run-" + UUID.randomUUID();
        String threadId = request.threadId() != null ? request.threadId()
                : idempotent != null ? idempotent.threadId() : "thread-" + UUID.randomUUID();
        Map<String, String> headers = idempotent == null ? Map.of() : Map.of(
                IdempotentStart.KEY_HEADER, idempotent.key(), IdempotentStart.FINGERPRINT_HEADER, idempotent.fingerprint());
        try {
            producer.turnRequest(TurnRequestRecord.request(turnId, threadId, runId, tenantId, clock.millis(),
                    request.toJson()), trace, headers).get(ACCEPT_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            permit.release();
            throw new ApiError(503, "the gateway is shutting down");
        } catch (ExecutionException | TimeoutException e) {
            permit.release();
            LOG.error("cannot put turn {} on the turn requests topic: {}", turnId, Failures.describe(e));
            throw new ApiError(503, "the turn could not be queued (Kafka is unavailable); try again");
        }
        permits.put(turnId, new Held(permit, ScopedIds.threadKey(tenantId, threadId)));
        ownership.accepted(turnId, tenantId);
        metrics.increment(GatewayMetrics.Counter.TURNS_STARTED);
        return new TurnStatus(turnId, threadId, runId, TurnPhase.RUNNING);
    }

    /** A turn ended on this gateway: the permit it holds here, if it was accepted here, is free. */
    void ended(String turnId) {
        Held held = permits.remove(turnId);
        if (held != null) {
            held.permit().release();
        }
    }

    /**
     * The thread's running turn as Kafka shows it, or one accepted here that has not ended (Kafka may not show it
     * yet): a 409 that names it.
     */
    private void rejectIfBusy(String threadId, String tenantId) {
        String threadKey = ScopedIds.threadKey(tenantId, threadId);
        Optional<String> running = views.runningTurnOf(threadId, tenantId).or(() -> permits.entrySet().stream()
                .filter(held -> held.getValue().threadKey().equals(threadKey) && !hasEnded(held.getKey()))
                .map(Map.Entry::getKey).findFirst());
        if (running.isPresent()) {
            metrics.increment(GatewayMetrics.Counter.TURNS_REJECTED);
            throw new ApiError(409, "thread " + threadId + " is running turn " + running.get() + "; send the message "
                    + "when it has ended, or cancel it first (POST /v1/turns/" + running.get() + "/cancel)");
        }
    }

    private boolean hasEnded(String turnId) {
        return registry.status(turnId).map(status -> status.status().ended())
                .orElseGet(() -> views.snapshot(turnId, null).map(snapshot -> snapshot.status().ended()).orElse(false));
    }

    /** Permits of turns accepted here that ended, here or, as Kafka shows, on another gateway. */
    private void releaseEndedPermits() {
        permits.forEach((turnId, held) -> {
            if (hasEnded(turnId) && permits.remove(turnId, held)) {
                held.permit().release();
            }
        });
    }
}
