package io.turnstream.gateway.view;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * When work waiting for the item-state view (a turn's end answer, an SSE client's catch-up) is tried and goes through.
 * The real waits, with a broker, are in {@code TurnEndSnapshotTest} and {@code TurnEventsSseTest}.
 */
class ItemStateWaitsTest {

    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

    @AfterEach
    void stopScheduler() {
        scheduler.shutdownNow();
    }

    @Test
    void workTheViewsHoldGoesThroughAtOnce() {
        Work held = new Work();
        held.held = true;

        new ItemStateWaits(scheduler, Duration.ofMinutes(1)).run("turn-1", "testing", held);

        assertThat(held.wentThrough).as("at once, not anyway").containsExactly(false);
    }

    @Test
    void waitingWorkGoesThroughOnceAtTheFirstReadOfItsTurnAfterWhichTheViewsHoldIt() {
        ItemStateWaits waits = new ItemStateWaits(scheduler, Duration.ofMinutes(1));
        Work work = new Work();
        waits.run("turn-1", "testing", work);
        waits.stateRead("turn-1");
        assertThat(work.wentThrough).isEmpty();

        work.held = true;
        waits.stateRead("turn-2");
        assertThat(work.wentThrough).as("a read of another turn tries nothing").isEmpty();
        waits.stateRead("turn-1");
        waits.stateRead("turn-1");

        assertThat(work.wentThrough).containsExactly(false);
    }

    @Test
    void workTheViewsDoNotHoldGoesThroughWithWhatTheyHoldAtTheBound() {
        ItemStateWaits waits = new ItemStateWaits(scheduler, Duration.ofMillis(50));
        Work work = new Work();

        waits.run("turn-1", "testing", work);

        await().atMost(Duration.ofSeconds(30)).until(() -> !work.wentThrough.isEmpty());
        waits.stateRead("turn-1");
        assertThat(work.wentThrough).containsExactly(true);
    }

    /** Work that goes through once {@link #held} says the views hold what it needs, or anyway. */
    private static final class Work implements ItemStateWaits.Attempt {
        volatile boolean held;
        /** Each time it went through: whether it went through anyway. */
        final List<Boolean> wentThrough = new CopyOnWriteArrayList<>();

        @Override
        public boolean tryNow(boolean anyway) {
            if (held || anyway) {
                wentThrough.add(anyway);
                return true;
            }
            return false;
        }
    }
}
