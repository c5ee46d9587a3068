package io.turnstream.gateway.provider;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Notices provider streams that stop sending bytes. HTTP clients only time out until the response
 * headers; after that a silent connection would block a turn forever. One daemon thread checks
 * every watched stream a few times per timeout, against an injected time source.
 */
public final class StallWatchdog implements AutoCloseable {

    /** Monotonic nanoseconds: {@link System#nanoTime} in the gateway, a hand-moved value in tests. */
    private final LongSupplier nanoTime;

    public StallWatchdog() {
        this(System::nanoTime);
    }

    StallWatchdog(LongSupplier nanoTime) {
        this.nanoTime = nanoTime;
    }

    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread thread = new Thread(r, "turnstream-stall-watchdog");
        thread.setDaemon(true);
        return thread;
    });

    /** A stream that tells the watchdog about every byte it reads. */
    public final class Watched extends FilterInputStream implements AutoCloseable {
        private final long timeoutNanos;
        private final Runnable onStall;
        private final ScheduledFuture<?> check;
        private volatile long lastActivity;
        private volatile boolean stalled;

        private Watched(InputStream in, Duration timeout, Runnable onStall) {
            super(in);
            this.timeoutNanos = timeout.toNanos();
            this.onStall = onStall;
            this.lastActivity = nanoTime.getAsLong();
            long period = Math.max(10, timeout.toMillis() / 10);
            this.check = timer.scheduleAtFixedRate(this::check, period, period, TimeUnit.MILLISECONDS);
        }

        /** Runs on the watchdog's thread a few times per timeout; a test calls it after moving the time. */
        void check() {
            if (!stalled && nanoTime.getAsLong() - lastActivity > timeoutNanos) {
                stalled = true;
                check.cancel(false);
                onStall.run();
            }
        }

        public boolean stalled() {
            return stalled;
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            lastActivity = nanoTime.getAsLong();
            return b;
        }

        @Override
        public int read(byte[] buffer, int offset, int length) throws IOException {
            int n = super.read(buffer, offset, length);
            if (n > 0) {
                lastActivity = nanoTime.getAsLong();
            }
            return n;
        }

        /** Stops watching; the underlying stream is closed by its owner. */
        @Override
        public void close() {
            check.cancel(false);
        }
    }

    /** Watches {@code in}; {@code onStall} runs once, on the watchdog thread, if no byte arrives for {@code timeout}. */
    public Watched watch(InputStream in, Duration timeout, Runnable onStall) {
        return new Watched(in, timeout, onStall);
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
