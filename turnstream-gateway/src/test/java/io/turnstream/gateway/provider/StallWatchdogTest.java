package io.turnstream.gateway.provider;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The watchdog on a hand-moved time: its own timer never fires within the test (the timeout is an hour),
 * so each check is the test's.
 */
class StallWatchdogTest {

    private static final Duration TIMEOUT = Duration.ofHours(1);

    private final AtomicLong now = new AtomicLong();
    private final AtomicInteger stalls = new AtomicInteger();

    @Test
    void aStreamSilentForTheTimeoutStallsOnceAndEveryByteResetsTheClock() throws IOException {
        try (StallWatchdog watchdog = new StallWatchdog(now::get);
             StallWatchdog.Watched watched = watchdog.watch(new ByteArrayInputStream(new byte[] {1, 2}), TIMEOUT,
                     stalls::incrementAndGet)) {
            now.addAndGet(TIMEOUT.toNanos());
            watched.check();
            assertThat(stalls).hasValue(0);

            watched.read();
            now.addAndGet(TIMEOUT.toNanos());
            watched.check();
            assertThat(watched.stalled()).isFalse();

            now.incrementAndGet();
            watched.check();
            watched.check();
            assertThat(watched.stalled()).isTrue();
            assertThat(stalls).hasValue(1);
        }
    }
}
