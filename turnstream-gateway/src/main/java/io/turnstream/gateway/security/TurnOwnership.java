package io.turnstream.gateway.security;

import io.turnstream.gateway.http.ApiError;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * Which tenant a turn belongs to, as every gateway instance can tell: the turns this instance accepted,
 * else the turn's lifecycle events in Kafka (each carries the tenant from {@code response_start}). A turn
 * accepted elsewhere may not be in Kafka yet, so a turn no one knows is waited for, briefly, then is 404.
 * Another tenant's turn is 404 too, after the same wait, so an answer never tells that a turn exists.
 * The wait holds no thread: it is a future that one shared timer thread looks after, so a flood of
 * requests for unknown turns costs memory per request, not a request thread each.
 */
public final class TurnOwnership implements AutoCloseable {

    /** A known turn; {@code tenantId} is null for a turn of no tenant (started without keys). */
    public record Owner(String tenantId) {
    }

    private static final long POLL_MS = 25;
    private static final int REMEMBERED = 10_000;

    private final Function<String, Optional<Owner>> fromKafka;
    private final Duration grace;
    private final LongSupplier nanoTime;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread thread = new Thread(r, "turnstream-turn-ownership-wait");
        thread.setDaemon(true);
        return thread;
    });
    /** turn id -> owner, for turns accepted here (Kafka may not show them yet); the oldest are forgotten. */
    private final Map<String, Owner> accepted = new LinkedHashMap<>(256, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Owner> eldest) {
            return size() > REMEMBERED;
        }
    };

    /** @param fromKafka the owner of a turn as the gateway's views of Kafka show it */
    public TurnOwnership(Function<String, Optional<Owner>> fromKafka, Duration grace) {
        this(fromKafka, grace, System::nanoTime);
    }

    TurnOwnership(Function<String, Optional<Owner>> fromKafka, Duration grace, LongSupplier nanoTime) {
        this.fromKafka = fromKafka;
        this.grace = grace;
        this.nanoTime = nanoTime;
    }

    /** Records a turn this instance accepted. */
    public void accepted(String turnId, String tenantId) {
        synchronized (accepted) {
            accepted.put(turnId, new Owner(tenantId));
        }
    }

    /**
     * Completes when the turn exists and the caller may see it: any turn when the gateway runs without keys
     * ({@code tenantId} null), else only the tenant's own. Already complete when that is known at once.
     *
     * @return a future failing with a 404 {@link ApiError} otherwise, at the end of the grace period
     */
    public CompletableFuture<Void> whenVisible(String tenantId, String turnId) {
        CompletableFuture<Void> visible = new CompletableFuture<>();
        check(tenantId, turnId, nanoTime.getAsLong() + grace.toNanos(), visible);
        return visible;
    }

    /** True when the answer is known now: the turn is the caller's. */
    public boolean visibleNow(String tenantId, String turnId) {
        return find(turnId).filter(owner -> maySee(tenantId, owner)).isPresent();
    }

    private void check(String tenantId, String turnId, long deadline, CompletableFuture<Void> visible) {
        Optional<Owner> owner;
        try {
            owner = find(turnId);
        } catch (RuntimeException e) {
            visible.completeExceptionally(e);
            return;
        }
        long left = deadline - nanoTime.getAsLong();
        if (owner.isPresent() && maySee(tenantId, owner.get())) {
            visible.complete(null);
        } else if (owner.isEmpty() && left > 0) {
            schedule(() -> check(tenantId, turnId, deadline, visible), Math.min(TimeUnit.MILLISECONDS.toNanos(POLL_MS), left),
                    visible);
        } else if (owner.isPresent() && left > 0) {
            // another tenant's: answered like an unknown turn, after the same wait
            schedule(() -> visible.completeExceptionally(notFound(turnId)), left, visible);
        } else {
            visible.completeExceptionally(notFound(turnId));
        }
    }

    private void schedule(Runnable next, long delayNanos, CompletableFuture<Void> visible) {
        try {
            timer.schedule(next, delayNanos, TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.RejectedExecutionException closed) {
            visible.completeExceptionally(new ApiError(503, "the gateway is shutting down"));
        }
    }

    private static boolean maySee(String tenantId, Owner owner) {
        return tenantId == null || Objects.equals(tenantId, owner.tenantId());
    }

    private static ApiError notFound(String turnId) {
        return ApiError.notFound("no turn " + turnId + " on this gateway");
    }

    private Optional<Owner> find(String turnId) {
        synchronized (accepted) {
            Owner here = accepted.get(turnId);
            if (here != null) {
                return Optional.of(here);
            }
        }
        return fromKafka.apply(turnId);
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
