package io.turnstream.gateway.security;

import io.turnstream.gateway.http.ApiError;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * Which tenant a turn belongs to, as every gateway instance can tell: the turns this instance accepted,
 * else the turn's lifecycle events in Kafka (each carries the tenant from {@code response_start}). A turn
 * accepted elsewhere may not be in Kafka yet, so a turn no one knows is waited for, briefly, then is 404.
 * Another tenant's turn is 404 too, after the same wait, so an answer never tells that a turn exists.
 */
public final class TurnOwnership {

    /** A known turn; {@code tenantId} is null for a turn of no tenant (started without keys). */
    public record Owner(String tenantId) {
    }

    private static final long POLL_MS = 25;
    private static final int REMEMBERED = 10_000;

    private final Function<String, Optional<Owner>> fromKafka;
    private final Duration grace;
    /** turn id -> owner, for turns accepted here (Kafka may not show them yet); the oldest are forgotten. */
    private final Map<String, Owner> accepted = new LinkedHashMap<>(256, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Owner> eldest) {
            return size() > REMEMBERED;
        }
    };

    /** @param fromKafka the owner of a turn as the gateway's views of Kafka show it */
    public TurnOwnership(Function<String, Optional<Owner>> fromKafka, Duration grace) {
        this.fromKafka = fromKafka;
        this.grace = grace;
    }

    /** Records a turn this instance accepted. */
    public void accepted(String turnId, String tenantId) {
        synchronized (accepted) {
            accepted.put(turnId, new Owner(tenantId));
        }
    }

    /**
     * Returns when the turn exists and the caller may see it: any turn when the gateway runs without keys
     * ({@code tenantId} null), else only the tenant's own.
     *
     * @throws ApiError 404 otherwise, within the grace period
     */
    public void require(String tenantId, String turnId) {
        long deadline = System.nanoTime() + grace.toNanos();
        Optional<Owner> owner = find(turnId);
        while (owner.isEmpty() && System.nanoTime() < deadline) {
            pause(POLL_MS);
            owner = find(turnId);
        }
        if (owner.isPresent() && (tenantId == null || Objects.equals(tenantId, owner.get().tenantId()))) {
            return;
        }
        if (owner.isPresent()) {
            pause((deadline - System.nanoTime()) / 1_000_000);
        }
        throw ApiError.notFound("no turn " + turnId + " on this gateway");
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

    private static void pause(long millis) {
        if (millis <= 0) {
            return;
        }
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ApiError(503, "the gateway is shutting down");
        }
    }
}
