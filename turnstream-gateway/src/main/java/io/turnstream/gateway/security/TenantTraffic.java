package io.turnstream.gateway.security;

import io.turnstream.gateway.http.ApiError;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Per-tenant limits on the traffic one gateway instance serves, so no tenant's client can crowd out the
 * others: requests per second (a token bucket: a burst of {@code requestsPerSecond} then that rate) and
 * open event streams. Over either, 429 with {@code Retry-After}. Only a gateway with API keys applies them
 * (without keys it serves one user, on loopback).
 */
public final class TenantTraffic {

    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
    /** An open stream ends when its turn does or its client leaves: a short wait is the honest suggestion. */
    private static final long STREAM_RETRY_SECONDS = 5;

    private final int requestsPerSecond;
    private final int maxOpenStreams;
    private final LongSupplier nanoTime;
    private final Map<String, Bucket> buckets = new HashMap<>();
    private final Map<String, Integer> openStreams = new HashMap<>();

    private static final class Bucket {
        double tokens;
        long refilledAt;
    }

    public TenantTraffic(int requestsPerSecond, int maxOpenStreams, LongSupplier nanoTime) {
        this.requestsPerSecond = requestsPerSecond;
        this.maxOpenStreams = maxOpenStreams;
        this.nanoTime = nanoTime;
    }

    public static TenantTraffic of(SecurityConfig config) {
        return new TenantTraffic(config.maxRequestsPerSecond(), config.maxOpenStreams(), System::nanoTime);
    }

    /** Takes one request of the tenant's rate; a 429 when it has none left. */
    public synchronized void request(String tenantId) {
        long now = nanoTime.getAsLong();
        Bucket bucket = buckets.computeIfAbsent(key(tenantId), t -> {
            Bucket fresh = new Bucket();
            fresh.tokens = requestsPerSecond;
            fresh.refilledAt = now;
            return fresh;
        });
        bucket.tokens = Math.min(requestsPerSecond, bucket.tokens + (double) (now - bucket.refilledAt) * requestsPerSecond / SECOND);
        bucket.refilledAt = now;
        if (bucket.tokens < 1) {
            throw ApiError.tooManyRequests(who(tenantId) + " sent more than " + requestsPerSecond
                    + " requests per second, the limit (turnstream.gateway.tenant.max-requests-per-second)", 1);
        }
        bucket.tokens -= 1;
        if (buckets.size() > 100_000) {
            // full buckets say nothing; dropping them forgets no limit
            buckets.values().removeIf(b -> b.tokens >= requestsPerSecond - 1);
        }
    }

    /**
     * Opens one of the tenant's event streams.
     *
     * @return what closes it (idempotent)
     */
    public synchronized Runnable openStream(String tenantId) {
        String tenant = key(tenantId);
        int open = openStreams.getOrDefault(tenant, 0);
        if (open >= maxOpenStreams) {
            throw ApiError.tooManyRequests(who(tenantId) + " has " + maxOpenStreams
                    + " event streams open, the limit (turnstream.gateway.tenant.max-open-streams); close one first",
                    STREAM_RETRY_SECONDS);
        }
        openStreams.put(tenant, open + 1);
        boolean[] closed = {false};
        return () -> closeStream(tenant, closed);
    }

    private synchronized void closeStream(String tenant, boolean[] closed) {
        if (closed[0]) {
            return;
        }
        closed[0] = true;
        openStreams.computeIfPresent(tenant, (t, open) -> open <= 1 ? null : open - 1);
    }

    /** Open streams of a tenant, for tests and metrics. */
    public synchronized int openStreams(String tenantId) {
        return openStreams.getOrDefault(key(tenantId), 0);
    }

    private static String key(String tenantId) {
        return tenantId == null ? "" : tenantId;
    }

    private static String who(String tenantId) {
        return tenantId == null ? "this gateway's client" : "tenant " + tenantId;
    }
}
