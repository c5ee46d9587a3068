package io.turnstream.bench;

import io.turnstream.bench.BenchResults.Amplification;
import io.turnstream.bench.BenchResults.Figure;
import io.turnstream.bench.BenchResults.FloodResult;
import io.turnstream.bench.BenchResults.IsolationPair;
import io.turnstream.bench.BenchResults.LadderStep;
import io.turnstream.bench.BenchResults.Memory;
import io.turnstream.bench.BenchResults.StepPairs;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.function.ToDoubleFunction;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * The headline figures of a run, each with its spread: ratios to the baselines first (the median of
 * the per-pair ratios, not a ratio of medians), then the contenders' own figures, step by step; the
 * write amplification and memory over their repeats. The names are what {@code --compare} matches
 * by, so they stay stable.
 */
final class Figures {

    static final String RATIO = "x";
    static final String COUNT = "";
    /** What the name of every ratio of the topology to a baseline contains. */
    static final String TO_BASELINE = "topology / ";
    static final String FLOOD_VS_PASS_THROUGH = "flood throughput, topology / pass-through Streams";
    static final String FLOOD_CPU_VS_PASS_THROUGH = "flood CPU per event, topology / pass-through Streams";
    static final String CHANGELOG_RECORDS = "changelog bytes / content bytes, records, worst length";
    static final String CHANGELOG_DISK = "changelog bytes / content bytes, on disk, worst length";
    static final String ISOLATION_TURN_START = "POST /v1/turns p99 of another tenant, loaded / idle gateway";
    static final String ISOLATION_DELIVERY = "SSE delivery p99 of another tenant, loaded / idle gateway";

    private final List<Figure> figures = new ArrayList<>();

    private Figures() {
    }

    static List<Figure> of(List<FloodResult> flood, List<StepPairs> ladder, List<Amplification> amplification,
                           List<Memory> memory) {
        Figures f = new Figures();
        f.flood(flood);
        ladder.forEach(f::step);
        f.amplification(amplification);
        if (!memory.isEmpty()) {
            int turns = ladder.get(ladder.size() - 1).turns();
            f.add("heap per open turn at " + turns + " turns", "KB", values(memory, m -> m.heapPerOpenTurnBytes() / 1024.0));
            f.add("RocksDB memory at " + turns + " turns", "MB", values(memory, m -> m.rocksDbBytes() / 1048576.0));
        }
        return List.copyOf(f.figures);
    }

    /** Tenant B's p99s loaded over idle (the median of the per-pair ratios), then each side's own. */
    static List<Figure> isolation(List<IsolationPair> pairs) {
        Figures f = new Figures();
        f.add(ISOLATION_TURN_START, RATIO, Spread.ratios(values(pairs, IsolationPair::loadedTurnStartP99),
                values(pairs, IsolationPair::idleTurnStartP99)));
        f.add(ISOLATION_DELIVERY, RATIO, Spread.ratios(values(pairs, IsolationPair::loadedDeliveryP99),
                values(pairs, IsolationPair::idleDeliveryP99)));
        f.add("POST /v1/turns p99 of another tenant, idle gateway", "ms", values(pairs, IsolationPair::idleTurnStartP99));
        f.add("POST /v1/turns p99 of another tenant, loaded gateway", "ms", values(pairs, IsolationPair::loadedTurnStartP99));
        f.add("SSE delivery p99 of another tenant, idle gateway", "ms", values(pairs, IsolationPair::idleDeliveryP99));
        f.add("SSE delivery p99 of another tenant, loaded gateway", "ms", values(pairs, IsolationPair::loadedDeliveryP99));
        return List.copyOf(f.figures);
    }

    static String upsertAmplification(int tokens, String gradient) {
        return "upsert amplification at " + tokens + " tokens, " + gradient;
    }

    static String emitP99(int turns) {
        return "emit p99 at " + turns + " turns, topology";
    }

    static String contentP99(int turns) {
        return "content p99 through upserts at " + turns + " turns";
    }

    static String appendP99(int turns) {
        return "content p99 through appends at " + turns + " turns";
    }

    static String appendBytes(int turns) {
        return "append bytes / content bytes at " + turns + " turns";
    }

    /** The appends topic's log segment bytes on the broker (compressed, as stored) over the text. */
    static String appendLogBytes(int turns) {
        return "append log bytes / content bytes at " + turns + " turns";
    }

    private void flood(List<FloodResult> flood) {
        List<FloodResult> topology = reader(flood, FloodRun.TOPOLOGY);
        List<FloodResult> copy = reader(flood, FloodRun.PASS_THROUGH);
        List<FloodResult> consumer = reader(flood, FloodRun.CONSUMER);
        ratio(FLOOD_VS_PASS_THROUGH, topology, copy, FloodResult::eventsPerSec);
        ratio("flood throughput, topology / plain consumer", topology, consumer, FloodResult::eventsPerSec);
        ratio(FLOOD_CPU_VS_PASS_THROUGH, topology, copy, FloodResult::appCpuMsPer1000Events);
        for (List<FloodResult> runs : List.of(topology, copy, consumer)) {
            if (!runs.isEmpty()) {
                String app = runs.get(0).app();
                add("flood events/s, " + app, "events/s", values(runs, FloodResult::eventsPerSec));
                add("flood CPU ms per 1,000 events, " + app, "ms", values(runs, FloodResult::appCpuMsPer1000Events));
            }
        }
    }

    /** One ladder step: ratios to the pass-through app of the same pairs, then each app's own figures. */
    private void step(StepPairs step) {
        int turns = step.turns();
        List<LadderStep> topology = step.topology();
        List<LadderStep> copy = step.passThrough();
        // a run that fell behind may show nothing in its window: no latency rather than 0 ms, and no ratio for its pair
        List<Integer> bothShowing = IntStream.range(0, Math.min(topology.size(), copy.size()))
                .filter(i -> topology.get(i).emitLatency().count() > 0 && copy.get(i).emitLatency().count() > 0).boxed().toList();
        ratio("emit p99 at " + turns + " turns, topology / pass-through", bothShowing.stream().map(topology::get).toList(),
                bothShowing.stream().map(copy::get).toList(), s -> s.emitLatency().p99());
        ratio("CPU per event at " + turns + " turns, topology / pass-through", topology, copy,
                LadderStep::appCpuMsPer1000Events);
        List<LadderStep> showing = topology.stream().filter(s -> s.emitLatency().count() > 0).toList();
        add(emitP99(turns), "ms", values(showing, s -> s.emitLatency().p99()));
        add("emit p50 at " + turns + " turns, topology", "ms", values(showing, s -> s.emitLatency().p50()));
        List<LadderStep> appending = topology.stream().filter(s -> s.appendLatency().count() > 0).toList();
        add(appendP99(turns), "ms", values(appending, s -> s.appendLatency().p99()));
        add("content p50 through appends at " + turns + " turns", "ms", values(appending, s -> s.appendLatency().p50()));
        add(contentP99(turns), "ms", values(showing, s -> s.contentLatency().p99()));
        add(appendBytes(turns), RATIO, topology.stream().map(LadderStep::appendBytesPerContentByte)
                .filter(Objects::nonNull).toList());
        add(appendLogBytes(turns), RATIO, topology.stream().map(LadderStep::appendLogBytesPerContentByte)
                .filter(Objects::nonNull).toList());
        add("deltas never shown at " + turns + " turns, topology", COUNT, values(topology, s -> (double) s.owedDeltas()));
        add("CPU ms per 1,000 events at " + turns + " turns, topology", "ms",
                values(topology, LadderStep::appCpuMsPer1000Events));
        add("emit p99 at " + turns + " turns, pass-through", "ms",
                values(copy.stream().filter(s -> s.emitLatency().count() > 0).toList(), s -> s.emitLatency().p99()));
        add("CPU ms per 1,000 events at " + turns + " turns, pass-through", "ms",
                values(copy, LadderStep::appCpuMsPer1000Events));
    }

    /** Per gradient, the longest item's upsert amplification; the worst changelog ratio of each run. */
    private void amplification(List<Amplification> amplification) {
        int longest = amplification.stream().mapToInt(Amplification::tokens).max().orElse(0);
        amplification.stream().map(Amplification::gradient).distinct().forEach(gradient ->
                add(upsertAmplification(longest, gradient), RATIO, amplification.stream()
                        .filter(a -> a.tokens() == longest && a.gradient().equals(gradient))
                        .map(Amplification::upsertAmplification).toList()));
        add(CHANGELOG_RECORDS, RATIO, worstPerRun(amplification, Amplification::changelogRatio));
        add(CHANGELOG_DISK, RATIO, worstPerRun(amplification, Amplification::changelogDiskRatio));
    }

    private static List<Double> worstPerRun(List<Amplification> amplification, ToDoubleFunction<Amplification> ratio) {
        return amplification.stream().collect(Collectors.groupingBy(Amplification::run, TreeMap::new,
                Collectors.collectingAndThen(Collectors.toList(), runs -> runs.stream().mapToDouble(ratio).max().orElseThrow())))
                .values().stream().toList();
    }

    private <T> void ratio(String name, List<T> topology, List<T> baseline, ToDoubleFunction<T> figure) {
        if (!topology.isEmpty() && topology.size() == baseline.size()) {
            add(name, RATIO, Spread.ratios(values(topology, figure), values(baseline, figure)));
        }
    }

    private void add(String name, String unit, List<Double> values) {
        if (!values.isEmpty()) {
            figures.add(new Figure(name, unit, Spread.of(values)));
        }
    }

    private static List<FloodResult> reader(List<FloodResult> flood, String app) {
        return flood.stream().filter(f -> f.app().equals(app)).toList();
    }

    private static <T> List<Double> values(List<T> runs, ToDoubleFunction<T> figure) {
        return runs.stream().map(r -> figure.applyAsDouble(r)).toList();
    }

    static Optional<Figure> find(List<Figure> figures, String name) {
        return figures.stream().filter(f -> f.name().equals(name)).findFirst();
    }

    /** The warning lines: every ratio measured more than once whose range reaches past +/-20% of its median. */
    static List<String> warnings(List<Figure> figures) {
        return warnings(figures, f -> f.unit().equals(RATIO));
    }

    /** The warning lines of the {@code judged} figures measured more than once whose range reaches past +/-20%. */
    static List<String> warnings(List<Figure> figures, Predicate<Figure> judged) {
        List<String> warnings = new ArrayList<>();
        for (Figure f : figures) {
            Spread s = f.spread();
            if (judged.test(f) && s.runs() > 1 && s.widerThan(Spread.NOISE_LIMIT)) {
                warnings.add(String.format(Locale.ROOT, "too noisy to judge: %s, median %s, range %s (-%.0f%% / +%.0f%%, "
                                + "beyond +/-%.0f%%)", f.name(), number(s.median(), f.unit()), range(s, f.unit()),
                        s.below() * 100, s.above() * 100, Spread.NOISE_LIMIT * 100));
            }
        }
        return warnings;
    }

    /** "0.82x (0.70x-0.95x)", or the one value of a single run. */
    static String format(Spread s, String unit) {
        return s.runs() == 1 ? number(s.median(), unit) : number(s.median(), unit) + " (" + range(s, unit) + ")";
    }

    /** "0.37x (0.29x-0.60x; IQR 0.36x-0.38x)", as docs/benchmarks.md quotes a figure; one value for a single run. */
    static String formatWithQuartiles(Spread s, String unit) {
        return s.runs() == 1 ? number(s.median(), unit) : number(s.median(), unit) + " (" + range(s, unit) + "; IQR "
                + number(s.q1(), unit) + "-" + number(s.q3(), unit) + ")";
    }

    static String range(Spread s, String unit) {
        return number(s.min(), unit) + "-" + number(s.max(), unit);
    }

    static String number(double value, String unit) {
        double abs = Math.abs(value);
        String digits = abs >= 100 || unit.equals(COUNT) ? String.format(Locale.ROOT, "%,.0f", value)
                : abs >= 10 ? String.format(Locale.ROOT, "%.1f", value) : String.format(Locale.ROOT, "%.2f", value);
        return unit.equals(RATIO) ? digits + "x" : unit.isEmpty() || unit.equals("events/s") ? digits : digits + " " + unit;
    }
}
