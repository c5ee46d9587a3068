package io.turnstream.runtime;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
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
    /** The failure that began the replacements within the window: later ones are often its consequences. */
    private volatile Throwable firstFailure;

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
            firstFailure = failure;
        }
        if (recentReplacements.size() >= maxReplacements) {
            LOG.error("stream thread failed again after {} replacements within {} s; shutting down: {}",
                    recentReplacements.size(), Duration.ofNanos(windowNanos).toSeconds(), Failures.describe(failure), failure);
            return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        }
        recentReplacements.addLast(now);
        LOG.error("stream thread failed; replacing it ({} of {} allowed within {} s): {}", recentReplacements.size(),
                maxReplacements, Duration.ofNanos(windowNanos).toSeconds(), Failures.describe(failure), failure);
        return StreamThreadExceptionResponse.REPLACE_THREAD;
    }

    /**
     * The failure that began the failures leading to the last replacement or the shutdown, or null. It
     * is the one to report: a replaced thread can die of a consequence of it instead (a send that finds
     * the producer already in an error state names another topic than the record that failed).
     */
    Throwable firstFailure() {
        return firstFailure;
    }
}
