package io.turnstream.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A figure measured several times: the values in run order, their median, range and interquartile
 * range (quartiles by linear interpolation between order statistics). The range is "the spread"
 * everything else judges by: with a handful of repeats it is the only honest bound.
 */
public record Spread(List<Double> values, double median, double min, double max, double q1, double q3) {

    /** A ratio whose range reaches further than this from its median is too noisy to judge. */
    public static final double NOISE_LIMIT = 0.20;

    public Spread {
        values = List.copyOf(values);
    }

    public static Spread of(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        if (sorted.isEmpty() || sorted.stream().anyMatch(v -> v == null || !Double.isFinite(v))) {
            throw new IllegalArgumentException("a spread needs at least one finite value, got " + values);
        }
        sorted.sort(Double::compare);
        return new Spread(values, quantile(sorted, 0.5), sorted.get(0), sorted.get(sorted.size() - 1),
                quantile(sorted, 0.25), quantile(sorted, 0.75));
    }

    /** The {@code p} quantile of sorted values, interpolating linearly between neighbours (R's type 7). */
    static double quantile(List<Double> sorted, double p) {
        double position = p * (sorted.size() - 1);
        int below = (int) Math.floor(position);
        int above = Math.min(below + 1, sorted.size() - 1);
        return sorted.get(below) + (position - below) * (sorted.get(above) - sorted.get(below));
    }

    public int runs() {
        return values.size();
    }

    /** How far the minimum lies below the median, as a fraction of it (0.15 for 15% below). */
    public double below() {
        return median == 0 ? 0 : (median - min) / Math.abs(median);
    }

    /** How far the maximum lies above the median, as a fraction of it. */
    public double above() {
        return median == 0 ? 0 : (max - median) / Math.abs(median);
    }

    /** The range reaches further than {@code limit} (a fraction) from the median on either side. */
    public boolean widerThan(double limit) {
        return below() > limit || above() > limit;
    }

    public boolean contains(double value) {
        return value >= min && value <= max;
    }

    /** Each value divided by the value of the same run of {@code baseline}: per-pair ratios. */
    public static List<Double> ratios(List<Double> values, List<Double> baseline) {
        if (values.size() != baseline.size()) {
            throw new IllegalArgumentException("pairs need as many runs on each side, got " + values.size()
                    + " and " + baseline.size());
        }
        List<Double> ratios = new ArrayList<>();
        for (int i = 0; i < values.size(); i++) {
            double base = Objects.requireNonNull(baseline.get(i));
            if (base != 0) {
                ratios.add(values.get(i) / base);
            }
        }
        return ratios;
    }
}
