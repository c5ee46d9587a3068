package io.turnstream.runtime;

import io.turnstream.schema.SchemaRegistryException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.function.LongSupplier;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Replaces a stream thread that died, so one bad moment (a broker blip, a fenced producer) does
 * not kill the application. A failure that keeps coming back (more than {@code maxReplacements}
 * within {@code window}) is not a blip: then the client shuts down and the failure is reported,
 * instead of looping forever on the same record.
 *
 * <p>A thread that died because the schema registry cannot be reached (on Avro, a schema id not cached yet) is
 * neither: the registry's state, not a failure of the record or of ours, and it lasts as long as the outage. It is
 * replaced without using the budget, after a backoff ({@link #FIRST_REGISTRY_BACKOFF}, doubling up to
 * {@link #MAX_REGISTRY_BACKOFF}; from the first again once {@link #REGISTRY_QUIET} passes without one), and the
 * replacement reads the record again: an outage of any length pauses the topology instead of stopping it.
 */
final class ThreadReplacementBudget implements StreamsUncaughtExceptionHandler {

    static final Duration FIRST_REGISTRY_BACKOFF = Duration.ofSeconds(1);
    /**
     * Kept short: the dying thread waits still a member of the group (Kafka Streams calls the handler before the thread
     * leaves), so a rebalance begun meanwhile waits for it.
     */
    static final Duration MAX_REGISTRY_BACKOFF = Duration.ofSeconds(10);
    static final Duration REGISTRY_QUIET = Duration.ofMinutes(1);
    private static final Logger LOG = LoggerFactory.getLogger(ThreadReplacementBudget.class);

    /** Waits on the dying thread before its replacement starts; returns early when the service closes. */
    @FunctionalInterface
    interface Pause {
        void await(Duration backoff) throws InterruptedException;
    }

    private final int maxReplacements;
    private final long windowNanos;
    private final LongSupplier nanoClock;
    private final Pause pause;
    private final Deque<Long> recentReplacements = new ArrayDeque<>();
    /** The failures since the window was last empty, in order. */
    private final List<Throwable> episode = new ArrayList<>();
    /** The backoff before the last replacement for the registry, and when it was asked for; null before the first. */
    private Duration registryBackoff;
    private long lastRegistryFailure;

    ThreadReplacementBudget(int maxReplacements, Duration window, LongSupplier nanoClock, Pause pause) {
        this.maxReplacements = maxReplacements;
        this.windowNanos = window.toNanos();
        this.nanoClock = nanoClock;
        this.pause = pause;
    }

    @Override
    public StreamThreadExceptionResponse handle(Throwable failure) {
        SchemaRegistryException registry = Failures.registryFailure(failure);
        return registry != null ? afterTheRegistryBackoff(registry) : withinTheBudget(failure);
    }

    private synchronized StreamThreadExceptionResponse withinTheBudget(Throwable failure) {
        long now = nanoClock.getAsLong();
        while (!recentReplacements.isEmpty() && now - recentReplacements.peekFirst() > windowNanos) {
            recentReplacements.removeFirst();
        }
        if (recentReplacements.isEmpty()) {
            episode.clear();
        }
        episode.add(failure);
        if (recentReplacements.size() >= maxReplacements) {
            LOG.error("stream thread failed with no replacement left ({} of {} allowed within {} s used); shutting down: {}",
                    recentReplacements.size(), maxReplacements, Duration.ofNanos(windowNanos).toSeconds(),
                    Failures.describe(failure), failure);
            return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        }
        recentReplacements.addLast(now);
        LOG.error("stream thread failed; replacing it ({} of {} allowed within {} s): {}", recentReplacements.size(),
                maxReplacements, Duration.ofNanos(windowNanos).toSeconds(), Failures.describe(failure), failure);
        return StreamThreadExceptionResponse.REPLACE_THREAD;
    }

    /** Not under the lock: the other threads' failures are not held up by this one's wait. */
    private StreamThreadExceptionResponse afterTheRegistryBackoff(SchemaRegistryException registry) {
        Duration backoff = nextRegistryBackoff();
        LOG.warn("stream thread failed: the schema registry cannot be reached ({}); replacing it in {} ms, to read the "
                + "record again (not counted against the replacement budget)", registry.getMessage(), backoff.toMillis());
        try {
            pause.await(backoff);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return StreamThreadExceptionResponse.REPLACE_THREAD;
    }

    private synchronized Duration nextRegistryBackoff() {
        long now = nanoClock.getAsLong();
        boolean sameOutage = registryBackoff != null && now - lastRegistryFailure <= REGISTRY_QUIET.toNanos();
        Duration doubled = sameOutage ? registryBackoff.multipliedBy(2) : FIRST_REGISTRY_BACKOFF;
        registryBackoff = doubled.compareTo(MAX_REGISTRY_BACKOFF) > 0 ? MAX_REGISTRY_BACKOFF : doubled;
        lastRegistryFailure = now;
        return registryBackoff;
    }

    /**
     * The failure to report for the failures leading to the last replacement or the shutdown, or null:
     * the first that is not a consequence of another. A send that finds the producer already in an
     * error state (its failed batch not yet reported to Kafka Streams) dies naming its own topic, not
     * the record that failed; a thread that sees the recorded failure names that record.
     */
    synchronized Throwable reportedFailure() {
        return episode.stream().filter(f -> !Failures.foundProducerFailed(f)).findFirst()
                .orElse(episode.isEmpty() ? null : episode.get(0));
    }
}
