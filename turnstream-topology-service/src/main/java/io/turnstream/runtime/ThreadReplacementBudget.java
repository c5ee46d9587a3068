package io.turnstream.runtime;

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
 */
final class ThreadReplacementBudget implements StreamsUncaughtExceptionHandler {

    private static final Logger LOG = LoggerFactory.getLogger(ThreadReplacementBudget.class);

    private final int maxReplacements;
    private final long windowNanos;
    private final LongSupplier nanoClock;
    private final Deque<Long> recentReplacements = new ArrayDeque<>();
    /** The failures since the window was last empty, in order. */
    private final List<Throwable> episode = new ArrayList<>();

    ThreadReplacementBudget(int maxReplacements, Duration window, LongSupplier nanoClock) {
        this.maxReplacements = maxReplacements;
        this.windowNanos = window.toNanos();
        this.nanoClock = nanoClock;
    }

    @Override
    public synchronized StreamThreadExceptionResponse handle(Throwable failure) {
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
