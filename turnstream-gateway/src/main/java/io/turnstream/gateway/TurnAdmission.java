package io.turnstream.gateway;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.turnstream.gateway.api.IdempotentStart;
import io.turnstream.gateway.api.TurnStarter;
import io.turnstream.gateway.http.ApiError;
import io.turnstream.gateway.http.JsonBody;
import io.turnstream.gateway.loop.GatewayMetrics;
import io.turnstream.gateway.loop.TurnRegistry;
import io.turnstream.gateway.provider.ResolvedProvider;
import io.turnstream.gateway.security.SpendPolicy;
import io.turnstream.gateway.security.TurnOwnership;
import io.turnstream.gateway.spend.TenantUsage;
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
 * trusted from then on. The tenant's limits and budgets count every gateway's turns ({@link TenantUsage}).
 * Under the {@link BusyThreadPolicy} {@code reject}, a request to a thread whose turn is running is a 409.
 */
public final class TurnAdmission implements TurnStarter {

    private static final Logger LOG = LoggerFactory.getLogger(TurnAdmission.class);
    /** How long an accepted turn may take to reach {@code llm.turn-requests} before the caller hears 503. */
    static final long ACCEPT_TIMEOUT_MS = 30_000;

    private final int maxConcurrentTurns;
    private final Providers providers;
    private final TurnRegistry registry;
    private final TenantUsage tenantUsage;
    private final SpendPolicy spend;
    private final GatewayProducer producer;
    private final TurnOwnership ownership;
    private final GatewayMetrics metrics;
    private final Clock clock;
    private final TurnViews views;
    private final BusyThreadPolicy busyPolicy;
    /** Under {@code reject}: the threads (tenant's thread keys) of turns accepted here, by turn id, until they end. */
    private final Map<String, String> acceptedThreads = new ConcurrentHashMap<>();

    TurnAdmission(int maxConcurrentTurns, Providers providers, TurnRegistry registry, TenantUsage tenantUsage,
                  SpendPolicy spend, GatewayProducer producer, TurnOwnership ownership, GatewayMetrics metrics, Clock clock,
                  TurnViews views, BusyThreadPolicy busyPolicy) {
        this.maxConcurrentTurns = maxConcurrentTurns;
        this.providers = providers;
        this.registry = registry;
        this.tenantUsage = tenantUsage;
        this.spend = spend;
        this.producer = producer;
        this.ownership = ownership;
        this.metrics = metrics;
        this.clock = clock;
        this.views = views;
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
        if (request.fallbackModel() != null) {
            spend.checkModel(tenantId, resolved.name(), request.fallbackModel());
        }
        if (registry.runningCount() >= maxConcurrentTurns) {
            metrics.increment(GatewayMetrics.Counter.TURNS_REJECTED);
            throw new ApiError(429, "the gateway is running its limit of " + maxConcurrentTurns
                    + " turns; try again when one finishes");
        }
        String turnId = idempotent != null ? idempotent.turnId() : "turn-" + UUID.randomUUID();
        try {
            tenantUsage.admit(tenantId, turnId);
        } catch (ApiError overLimit) {
            metrics.increment(GatewayMetrics.Counter.TURNS_REJECTED);
            throw overLimit;
        }
        String runId = idempotent != null ? idempotent.runId() : "run-" + UUID.randomUUID();
        String threadId = request.threadId() != null ? request.threadId()
                : idempotent != null ? idempotent.threadId() : "thread-" + UUID.randomUUID();
        Map<String, String> headers = idempotent == null ? Map.of() : Map.of(
                IdempotentStart.KEY_HEADER, idempotent.key(), IdempotentStart.FINGERPRINT_HEADER, idempotent.fingerprint());
        ObjectNode body = request.toJson();
        if (idempotent != null) {
            body.put(IdempotentStart.MARKER, true);
        }
        try {
            producer.turnRequest(TurnRequestRecord.request(turnId, threadId, runId, tenantId, clock.millis(), body),
                    trace, headers).get(ACCEPT_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            tenantUsage.withdraw(turnId);
            throw new ApiError(503, "the gateway is shutting down");
        } catch (ExecutionException | TimeoutException e) {
            tenantUsage.withdraw(turnId);
            LOG.error("cannot put turn {} on the turn requests topic: {}", turnId, Failures.describe(e));
            throw new ApiError(503, "the turn could not be queued (Kafka is unavailable); try again");
        }
        ownership.accepted(turnId, tenantId);
        if (busyPolicy == BusyThreadPolicy.REJECT) {
            acceptedThreads.put(turnId, ScopedIds.threadKey(tenantId, threadId));
        }
        metrics.increment(GatewayMetrics.Counter.TURNS_STARTED);
        return new TurnStatus(turnId, threadId, runId, TurnPhase.RUNNING);
    }

    /** A turn ended on this gateway: it no longer counts as running (the other gateways learn it from Kafka). */
    void ended(String turnId) {
        tenantUsage.endedHere(turnId);
        acceptedThreads.remove(turnId);
    }

    /**
     * The thread's running turn as Kafka shows it, or one accepted here that has not ended (Kafka may not show it
     * yet): a 409 that names it.
     */
    private void rejectIfBusy(String threadId, String tenantId) {
        acceptedThreads.keySet().removeIf(this::hasEnded);
        String threadKey = ScopedIds.threadKey(tenantId, threadId);
        Optional<String> running = views.runningTurnOf(threadId, tenantId).or(() -> acceptedThreads.entrySet().stream()
                .filter(accepted -> accepted.getValue().equals(threadKey)).map(Map.Entry::getKey).findFirst());
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
}
