package io.turnstream.gateway.ownership;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * A clock tests move by hand; with a tick, every reading also moves it on by the tick, so a loop
 * bounded by a deadline ends after a few readings without waiting for real.
 */
public final class ManualClock extends Clock {

    private long millis;
    private final long tickMillis;

    public ManualClock(long startMillis, Duration tick) {
        this.millis = startMillis;
        this.tickMillis = tick.toMillis();
    }

    public ManualClock(long startMillis) {
        this(startMillis, Duration.ZERO);
    }

    public synchronized void advance(Duration duration) {
        millis += duration.toMillis();
    }

    @Override
    public synchronized long millis() {
        long now = millis;
        millis += tickMillis;
        return now;
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis());
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException("a test clock has no zones");
    }
}
