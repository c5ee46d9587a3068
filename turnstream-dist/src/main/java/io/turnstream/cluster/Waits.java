package io.turnstream.cluster;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.function.Function;
import java.util.function.Predicate;

/** Waits for a state by polling it, bounded: the fault runs wait for states, never for a time. */
final class Waits {

    private Waits() {
    }

    /**
     * Polls {@code value} every {@code interval} until {@code done} holds for it, and returns it.
     *
     * @throws IllegalStateException naming {@code what} when {@code bound} passes first
     */
    static <T> T until(String what, Duration bound, Duration interval, Callable<T> value, Predicate<T> done)
            throws Exception {
        return until(what, bound, interval, value, done, current -> "");
    }

    /**
     * As {@link #until(String, Duration, Duration, Callable, Predicate)}; on failure the message also says
     * what {@code missing} makes of the last value (which turn, which run was not there yet).
     */
    static <T> T until(String what, Duration bound, Duration interval, Callable<T> value, Predicate<T> done,
                       Function<T, String> missing) throws Exception {
        long deadline = System.nanoTime() + bound.toNanos();
        while (true) {
            T current = value.call();
            if (done.test(current)) {
                return current;
            }
            if (System.nanoTime() > deadline) {
                String detail = missing.apply(current);
                throw new IllegalStateException("not reached within " + bound.toSeconds() + " s: " + what
                        + (detail.isEmpty() ? "" : "; " + detail));
            }
            Thread.sleep(interval.toMillis());
        }
    }
}
