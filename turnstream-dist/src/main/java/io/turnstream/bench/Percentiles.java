package io.turnstream.bench;

import org.HdrHistogram.Histogram;

/** Latency percentiles in milliseconds, and how many values they summarise. */
public record Percentiles(long count, double p50, double p95, double p99, double max) {

    static Percentiles of(Histogram nanos) {
        if (nanos.getTotalCount() == 0) {
            return new Percentiles(0, 0, 0, 0, 0);
        }
        return new Percentiles(nanos.getTotalCount(), ms(nanos.getValueAtPercentile(50)),
                ms(nanos.getValueAtPercentile(95)), ms(nanos.getValueAtPercentile(99)), ms(nanos.getMaxValue()));
    }

    private static double ms(long nanos) {
        return Math.round(nanos / 10_000.0) / 100.0;
    }
}
