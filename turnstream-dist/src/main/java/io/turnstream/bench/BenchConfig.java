package io.turnstream.bench;

import java.time.Duration;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * What one benchmark run does. {@link #full()} is the documented default run, {@link #quick()} a
 * shorter one; tests use a tinier one.
 *
 * @param ladder concurrent simulated turns per ladder step
 * @param warmup load applied before each step's measurement window
 * @param measure length of each step's measurement window
 * @param drainLimit after a window, how long to wait for the upserts still owed to measured deltas
 * @param tokensPerSecond streaming rate of every simulated turn
 * @param tokensPerDelta estimated tokens (4 characters each) per delta event
 * @param reasoningTokens min and max length of each turn's reasoning item
 * @param messageTokens min and max length of each turn's message item
 * @param floodEvents raw events produced for the flood measurements
 * @param itemLengths item lengths (tokens) for the write-amplification measurements
 * @param growthFraction the optional growth rule measured against the seed gradient
 * @param targetStep ladder step whose figures the latency targets are judged on, and which
 *     {@code --only appends} runs
 * @param latencyTargetMs the ladder criterion: a step is sustained when its p99 emit latency is below this
 * @param partitions partitions of every benchmark topic
 * @param seed seed of the simulated content and lengths
 * @param pairs interleaved runs of each contender in the flood comparison and at each ladder step
 * @param largestStepPairs pairs at the largest ladder step (at most {@code pairs}); lowering it shortens a
 *     run the most, since that step's runs take the longest
 * @param amplificationRuns runs of the write-amplification phase, each on fresh topics and a fresh app
 * @param floodWarmupPairs at most this many unmeasured flood pairs of full size before the measured ones; they
 *     stop earlier once the JIT has settled (see {@link FloodRun})
 * @param phases the phases this run measures
 * @param settle how long the run waits, before each measured run, for the machine to settle ({@link Settle})
 */
public record BenchConfig(List<Integer> ladder, Duration warmup, Duration measure, Duration drainLimit,
                          int tokensPerSecond, int tokensPerDelta, Range reasoningTokens, Range messageTokens,
                          int floodEvents, List<Integer> itemLengths, double growthFraction, int targetStep,
                          long latencyTargetMs, int partitions, long seed, int pairs, int largestStepPairs,
                          int amplificationRuns, int floodWarmupPairs, Set<Phase> phases, Settling settle) {

    /**
     * What a run can measure: the flood pairs; the ladder (at every step, pairs of the topology and
     * the pass-through app); the appends (the topology's runs at the target step alone); the write
     * amplification; the isolation of one tenant from another's abusive clients at the gateway.
     */
    public enum Phase {
        FLOOD, LADDER, APPENDS, AMPLIFICATION, ISOLATION;

        public static Phase parse(String name) {
            try {
                return valueOf(name.strip().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("unknown phase '" + name + "', expected one of "
                        + Arrays.stream(values()).map(Phase::toString).collect(Collectors.joining(", ")));
            }
        }

        @Override
        public String toString() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** An inclusive range of token counts. */
    public record Range(int min, int max) {
        public Range {
            if (min <= 0 || max < min) {
                throw new IllegalArgumentException("token range must satisfy 0 < min <= max, got " + min + ".." + max);
            }
        }

        public static Range parse(String text) {
            String[] parts = text.split("\\.\\.");
            if (parts.length != 2) {
                throw new IllegalArgumentException("token range must look like MIN..MAX, got '" + text + "'");
            }
            return new Range(Integer.parseInt(parts[0].strip()), Integer.parseInt(parts[1].strip()));
        }

        @Override
        public String toString() {
            return min + ".." + max;
        }
    }

    /**
     * The rule {@link Settle} waits by: the machine has settled once its CPUs were idle for at least {@code minIdle}
     * of the last {@code window}, all cores counted. A wait gives up after {@code maxWait} (0: never wait, only record
     * the load), and all of a run's waits together after {@code budget}; after that each measured run only records
     * one window.
     */
    public record Settling(Duration window, double minIdle, Duration maxWait, Duration budget) {

        /** No waiting: each measured run records the load average and goes on. */
        public static final Settling OFF = new Settling(Duration.ofSeconds(2), 0.8, Duration.ZERO, Duration.ZERO);

        public Settling {
            if (window.isNegative() || window.isZero()) {
                throw new IllegalArgumentException("the settle window must be positive, got " + window);
            }
            if (!(minIdle > 0 && minIdle <= 1)) {
                throw new IllegalArgumentException("the settle idle share must be over 0% and at most 100%, got "
                        + Math.round(minIdle * 100) + "%");
            }
            if (maxWait.isNegative() || budget.isNegative()) {
                throw new IllegalArgumentException("settle waits cannot be negative");
            }
        }

        public boolean enabled() {
            return !maxWait.isZero();
        }

        public Settling withMinIdle(double share) {
            return new Settling(window, share, maxWait, budget);
        }

        public Settling withMaxWait(Duration wait) {
            return new Settling(window, minIdle, wait, budget);
        }
    }

    public BenchConfig {
        ladder = List.copyOf(ladder);
        itemLengths = List.copyOf(itemLengths);
        phases = Set.copyOf(phases);
        if (ladder.isEmpty() || ladder.stream().anyMatch(n -> n <= 0)) {
            throw new IllegalArgumentException("ladder must be positive turn counts, got " + ladder);
        }
        if (itemLengths.stream().anyMatch(n -> n <= 0)) {
            throw new IllegalArgumentException("item lengths must be positive, got " + itemLengths);
        }
        if (tokensPerSecond <= 0 || tokensPerDelta <= 0 || floodEvents <= 0 || partitions <= 0) {
            throw new IllegalArgumentException("rates, sizes and partitions must be positive");
        }
        if (pairs <= 0 || largestStepPairs <= 0) {
            throw new IllegalArgumentException("pairs must be at least 1, got " + Math.min(pairs, largestStepPairs));
        }
        if (floodWarmupPairs <= 0) {
            throw new IllegalArgumentException("flood warm-up pairs must be at least 1, got " + floodWarmupPairs);
        }
        if (amplificationRuns <= 0) {
            throw new IllegalArgumentException("amplification runs must be at least 1, got " + amplificationRuns);
        }
        if (phases.isEmpty()) {
            throw new IllegalArgumentException("a run needs at least one phase");
        }
        if (growthFraction <= 0) {
            throw new IllegalArgumentException("growth fraction must be > 0, got " + growthFraction);
        }
    }

    public static BenchConfig full() {
        return new BenchConfig(List.of(50, 200, 1000), Duration.ofSeconds(5), Duration.ofSeconds(10),
                Duration.ofSeconds(60), 50, 3, new Range(100, 400), new Range(200, 2000), 1_000_000,
                List.of(100, 1_000, 10_000, 100_000), 0.25, 200, 250, 4, 42, 5, 5, 3, 10, EnumSet.allOf(Phase.class),
                new Settling(Duration.ofSeconds(2), 0.8, Duration.ofSeconds(120), Duration.ofMinutes(10)));
    }

    public static BenchConfig quick() {
        return new BenchConfig(List.of(50, 200), Duration.ofSeconds(3), Duration.ofSeconds(8),
                Duration.ofSeconds(30), 50, 3, new Range(50, 200), new Range(100, 600), 50_000,
                List.of(100, 1_000, 10_000), 0.25, 200, 250, 4, 42, 5, 5, 3, 4, EnumSet.allOf(Phase.class),
                new Settling(Duration.ofSeconds(2), 0.8, Duration.ofSeconds(20), Duration.ofMinutes(1)));
    }

    public boolean measures(Phase phase) {
        return phases.contains(phase);
    }

    /**
     * The steps the ladder phases run: the ladder's when it is measured, and the target step (for
     * {@code --only appends}, or a target step outside the ladder), in increasing order.
     */
    public List<Integer> steps() {
        if (!measures(Phase.LADDER) && !measures(Phase.APPENDS)) {
            return List.of();
        }
        TreeSet<Integer> steps = new TreeSet<>(measures(Phase.LADDER) ? ladder : List.of());
        steps.add(targetStep);
        return List.copyOf(steps);
    }

    /** Pairs at a step: at the largest of several, no more than {@code largestStepPairs}. */
    public int pairsAt(int turns) {
        List<Integer> steps = steps();
        boolean largest = steps.size() > 1 && turns == steps.get(steps.size() - 1);
        return largest ? Math.min(pairs, largestStepPairs) : pairs;
    }

    /** Nanoseconds between two deltas of one turn. */
    public long deltaIntervalNanos() {
        return 1_000_000_000L * tokensPerDelta / tokensPerSecond;
    }
}
