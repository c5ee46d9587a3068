package io.turnstream.gateway.loop;

import java.time.Clock;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.random.RandomGenerator;

/**
 * How the agent loop waits, by the turn's clock, for the {@link LoopMachine}'s next input or deadline (a
 * retry's backoff, a tool round's timeout). The gateway blocks its turn's thread; the turn simulation
 * moves its clock to the next thing it scheduled instead, so no test waits for real.
 */
public interface LoopWaits {

    /** The next input, waiting up to {@code deadline} (epoch millis); null when none came by then. */
    <T> T next(BlockingQueue<T> inputs, long deadline) throws InterruptedException;

    /** Draws a backoff's jitter: the simulation's comes from its seed, so a schedule replays exactly. */
    default RandomGenerator jitter() {
        return RandomGenerator.getDefault();
    }

    /** Blocks the calling thread, by {@code clock}. */
    static LoopWaits blocking(Clock clock) {
        return new LoopWaits() {
            @Override
            public <T> T next(BlockingQueue<T> inputs, long deadline) throws InterruptedException {
                return inputs.poll(Math.max(0, deadline - clock.millis()), TimeUnit.MILLISECONDS);
            }
        };
    }
}
