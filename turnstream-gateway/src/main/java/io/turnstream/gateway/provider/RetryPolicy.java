package io.turnstream.gateway.provider;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.random.RandomGenerator;

/**
 * When to call a provider again after a transient failure: exponential backoff with jitter, or
 * exactly what the provider asked for in {@code retry-after}.
 *
 * @param maxAttempts calls per step in total, the first included
 * @param baseDelay the backoff before the first retry; doubled for each further one
 * @param maxDelay the longest backoff, and the longest {@code retry-after} worth waiting for
 */
public record RetryPolicy(int maxAttempts, Duration baseDelay, Duration maxDelay) {

    public static final RetryPolicy DEFAULT = new RetryPolicy(4, Duration.ofSeconds(1), Duration.ofSeconds(30));

    public RetryPolicy {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1");
        }
    }

    /**
     * @param retry 1 for the first retry
     * @param retryAfter what the provider asked for, or null
     * @return the delay, or null when the provider asked for longer than {@code maxDelay}
     */
    public Duration delay(int retry, Duration retryAfter) {
        return delay(retry, retryAfter, ThreadLocalRandom.current());
    }

    /** {@link #delay(int, Duration)} with the jitter drawn from {@code random}: seeded in a simulation. */
    public Duration delay(int retry, Duration retryAfter, RandomGenerator random) {
        if (retryAfter != null) {
            return retryAfter.compareTo(maxDelay) > 0 ? null : retryAfter;
        }
        long exponential = baseDelay.toMillis() << Math.min(retry - 1, 30);
        long capped = Math.min(Math.max(exponential, 0), maxDelay.toMillis());
        // "equal jitter": at least half the backoff, so retries never bunch up at zero
        long jittered = capped / 2 + random.nextLong(capped / 2 + 1);
        return Duration.ofMillis(jittered);
    }
}
