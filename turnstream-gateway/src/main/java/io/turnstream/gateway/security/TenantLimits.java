package io.turnstream.gateway.security;

import io.turnstream.gateway.http.ApiError;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Per-tenant limits on the turns this gateway instance accepts: how many run at once, and how many start
 * in any 60 seconds (a sliding window). A turn over either limit is refused with 429 and {@code Retry-After}.
 * The gateway without keys counts all its turns as one tenant's.
 */
public final class TenantLimits {

    /** A turn's place within its tenant's limits; release it once when the turn has ended. */
    public interface Permit {
        void release();
    }

    private static final long WINDOW_NANOS = TimeUnit.MINUTES.toNanos(1);
    /** No one can know when a running turn ends; a short wait is the honest suggestion. */
    private static final long CONCURRENT_RETRY_SECONDS = 5;

    private final int maxConcurrent;
    private final int perMinute;
    private final LongSupplier nanoTime;
    private final Map<String, Usage> usage = new HashMap<>();

    private static final class Usage {
        int running;
        final Deque<Long> recentStarts = new ArrayDeque<>();
    }

    public TenantLimits(int maxConcurrent, int perMinute, LongSupplier nanoTime) {
        this.maxConcurrent = maxConcurrent;
        this.perMinute = perMinute;
        this.nanoTime = nanoTime;
    }

    public static TenantLimits of(SecurityConfig config) {
        return new TenantLimits(config.maxConcurrentTurns(), config.maxTurnsPerMinute(), System::nanoTime);
    }

    /** @param tenantId null for the gateway without keys */
    public synchronized Permit acquire(String tenantId) {
        String tenant = tenantId == null ? "" : tenantId;
        Usage tenantUsage = usage.computeIfAbsent(tenant, t -> new Usage());
        long now = nanoTime.getAsLong();
        while (!tenantUsage.recentStarts.isEmpty() && now - tenantUsage.recentStarts.peekFirst() >= WINDOW_NANOS) {
            tenantUsage.recentStarts.removeFirst();
        }
        if (tenantUsage.running >= maxConcurrent) {
            throw ApiError.tooManyRequests(who(tenantId) + " is running " + maxConcurrent
                    + " turns, the limit (turnstream.gateway.tenant.max-concurrent-turns); try again when one finishes",
                    CONCURRENT_RETRY_SECONDS);
        }
        if (tenantUsage.recentStarts.size() >= perMinute) {
            long waitNanos = tenantUsage.recentStarts.peekFirst() + WINDOW_NANOS - now;
            throw ApiError.tooManyRequests(who(tenantId) + " has started " + perMinute
                    + " turns in the last minute, the limit (turnstream.gateway.tenant.max-turns-per-minute)",
                    (waitNanos + TimeUnit.SECONDS.toNanos(1) - 1) / TimeUnit.SECONDS.toNanos(1));
        }
        tenantUsage.running++;
        tenantUsage.recentStarts.addLast(now);
        boolean[] released = {false};
        return () -> release(tenant, released);
    }

    private synchronized void release(String tenant, boolean[] released) {
        if (released[0]) {
            return;
        }
        released[0] = true;
        Usage tenantUsage = usage.get(tenant);
        tenantUsage.running--;
        if (tenantUsage.running == 0 && tenantUsage.recentStarts.isEmpty()) {
            usage.remove(tenant);
        }
    }

    private static String who(String tenantId) {
        return tenantId == null ? "this gateway" : "tenant " + tenantId;
    }
}
