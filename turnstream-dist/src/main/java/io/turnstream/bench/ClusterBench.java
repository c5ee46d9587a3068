package io.turnstream.bench;

import io.turnstream.bench.BenchResults.Figure;
import io.turnstream.bench.BenchResults.FloodResult;
import io.turnstream.bench.BenchResults.LoadAverage;
import io.turnstream.cluster.ClusterFaultRun;
import io.turnstream.cluster.ClusterFaultRun.Fault;
import io.turnstream.cluster.LocalCluster;
import io.turnstream.cluster.TopicFollower.Sighting;
import io.turnstream.model.Json;
import java.awt.Graphics2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.function.ToDoubleFunction;
import java.util.stream.Collectors;
import javax.imageio.ImageIO;
import org.apache.kafka.common.utils.Utils;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * {@code turnstream bench --cluster N}: the fault suite as a benchmark, on local clusters of N broker
 * processes. First the topology's throughput with one and with two instances (the flood of
 * {@code bench --only flood}, the topology alone, on the cluster's replicated topics), then the
 * fault run of {@link ClusterFaultRun} (two instances of each service, a topology instance, an
 * executor, a gateway and a broker SIGKILLed in turn while the turns stream), repeated, each run on a
 * fresh cluster: each fault's takeover, and the latency a UI sees through the faults (per second, the
 * longest wait of a turn for its next upsert). Every figure is the median and spread of its runs.
 * Writes {@code cluster-results.json}, {@code cluster-results.md} and {@code cluster-faults-latency.png},
 * and the services' and brokers' logs to {@code logs/}, a directory per cluster.
 */
public final class ClusterBench {

    public static final String RESULTS_JSON = "cluster-results.json";
    public static final String RESULTS_MD = "cluster-results.md";
    public static final String LATENCY_PNG = "cluster-faults-latency.png";
    public static final String COMPARISON_MD = "cluster-comparison.md";
    private static final List<Integer> INSTANCES = List.of(1, 2);
    private static final String SECONDS = "s";
    /** How much of the run before a SIGKILL the chart shows, for the waits as they were. */
    private static final double CHART_BEFORE_SECONDS = 10;
    static final int PANEL_WIDTH = 900;
    static final int PANEL_HEIGHT = 320;

    /** One figure of every fault: what it measures (the name after the fault's), its unit, its value in a run. */
    private record Measure(String what, String unit, ToDoubleFunction<Fault> value) {
    }

    private static final List<Measure> MEASURES = List.of(
            new Measure("turns in flight", Figures.COUNT, Fault::inFlight),
            new Measure("upserts again, last turn", SECONDS, Fault::upsertsAgainSeconds),
            new Measure("upserts again, median turn", SECONDS, Fault::upsertsAgainMedianSeconds),
            new Measure("upserts or appends again, last turn", SECONDS, Fault::outputAgainSeconds),
            new Measure("upserts or appends again, median turn", SECONDS, Fault::outputAgainMedianSeconds),
            new Measure("every task partition again", SECONDS, Fault::partitionsAgainSeconds),
            new Measure("task partitions again, median partition", SECONDS, Fault::partitionsAgainMedianSeconds),
            new Measure("raw events again, last run", SECONDS, Fault::rawAgainSeconds));

    /**
     * How a run is made.
     *
     * @param nodes broker processes
     * @param runs throughput runs per instance count, alternating one and two instances
     * @param floodEvents raw events of each throughput run
     * @param turns turns started at once in the fault run
     * @param tokensPerSecond the simulated provider's rate in the fault run
     * @param faultRuns fault runs, each on a fresh cluster
     */
    public record Settings(int nodes, int runs, int floodEvents, int turns, int tokensPerSecond, int faultRuns) {

        public static Settings full(int nodes) {
            return new Settings(nodes, 3, 100_000, 200, 5, 3);
        }

        public static Settings quick(int nodes) {
            return new Settings(nodes, 1, 10_000, 20, 5, 1);
        }

        /** The same run with {@code count} turns started at once in the fault run. */
        public Settings withTurns(int count) {
            if (count < 1) {
                throw new IllegalArgumentException("turns must be at least 1, got " + count);
            }
            return new Settings(nodes, runs, floodEvents, count, tokensPerSecond, faultRuns);
        }

        /** The same run with {@code count} fault runs. */
        public Settings withFaultRuns(int count) {
            if (count < 1) {
                throw new IllegalArgumentException("fault runs must be at least 1, got " + count);
            }
            return new Settings(nodes, runs, floodEvents, turns, tokensPerSecond, count);
        }
    }

    /** One second of the fault run: how many upserts were read, and the longest and p99 wait before one. */
    public record Second(int second, int upserts, double p99WaitMs, double maxWaitMs) {
    }

    /** Throughput of the topology with {@code instances} instances over the runs. */
    public record Throughput(int instances, Spread eventsPerSec, List<FloodResult> runs) {
    }

    /**
     * One fault run (from 1), on its own fresh cluster: the machine's load before and after it, the turns it
     * started in all, its start-up and run time, its faults and its latency per second; or, when it failed (a
     * turn that never streamed again, a service that never got healthy), {@code error} and nothing else.
     */
    public record FaultRun(int run, LoadAverage loadBefore, LoadAverage loadAfter, String error, int turns,
                           double startupSeconds, double seconds, List<Fault> faults, List<Second> timeline) {

        static FaultRun failed(int run, LoadAverage loadBefore, LoadAverage loadAfter, String error) {
            return new FaultRun(run, loadBefore, loadAfter, error, 0, 0, 0, List.of(), List.of());
        }

        public boolean failed() {
            return error != null;
        }
    }

    /**
     * {@code figures} are the headline figures, each the median and spread of its runs (the key {@code --compare}
     * matches by); {@code throughput} and {@code faultRuns} every run they come from.
     */
    public record Results(int cpus, LoadAverage loadBefore, LoadAverage loadAfter, Settings settings,
                          List<Figure> figures, List<String> warnings, List<Throughput> throughput,
                          List<FaultRun> faultRuns, double durationSeconds) {

        /** The figures of these runs and their warnings, the failed runs' first. */
        static Results of(int cpus, LoadAverage loadBefore, LoadAverage loadAfter, Settings settings,
                          List<Throughput> throughput, List<FaultRun> faultRuns, double durationSeconds) {
            // qualified: the record's own accessors of these names would hide the class's methods
            List<Figure> figures = ClusterBench.figures(throughput, faultRuns);
            List<String> warnings = new ArrayList<>(ClusterBench.failures(faultRuns));
            warnings.addAll(ClusterBench.warnings(figures));
            return new Results(cpus, loadBefore, loadAfter, settings, figures, warnings, throughput, faultRuns,
                    durationSeconds);
        }

        /** A line per failed fault run, empty when every run completed. */
        public List<String> failures() {
            return ClusterBench.failures(faultRuns);
        }
    }

    private final Settings settings;
    private final BenchConfig flood;
    private final Properties kafka;
    private final PrintWriter progress;

    /**
     * @param kafka properties ({@link BenchProperties}, Kafka's and Turnstream's) of the topology in the throughput
     *     runs, and added to every service's configuration in the fault runs
     */
    public ClusterBench(Settings settings, Properties kafka, PrintWriter progress) {
        this.settings = settings;
        BenchConfig d = BenchConfig.quick();
        this.flood = new BenchConfig(d.ladder(), d.warmup(), d.measure(), d.drainLimit(), d.tokensPerSecond(),
                d.tokensPerDelta(), d.reasoningTokens(), d.messageTokens(), settings.floodEvents(), d.itemLengths(),
                d.growthFraction(), d.targetStep(), d.latencyTargetMs(), ClusterFaultRun.PARTITIONS, d.seed(),
                settings.runs(), d.largestStepPairs(), d.amplificationRuns(), d.floodWarmupPairs(), d.phases(),
                BenchConfig.Settling.OFF);
        this.kafka = kafka;
        this.progress = progress;
    }

    public Results run(Path outputDir) throws Exception {
        long start = System.nanoTime();
        Files.createDirectories(outputDir);
        LoadAverage before = Resources.loadAverage();
        progress.printf("turnstream bench --cluster %d: %d cpus, load average %s; %d fault run(s); results in %s%n",
                settings.nodes(), Runtime.getRuntime().availableProcessors(), ResultsReport.load(before),
                settings.faultRuns(), outputDir);
        progress.flush();
        Path dir = Files.createTempDirectory("turnstream-bench-cluster");
        List<FloodResult> floods;
        List<FaultRun> faultRuns = new ArrayList<>();
        try {
            floods = throughput(dir.resolve("throughput"), outputDir.resolve("logs").resolve("throughput"));
            for (int i = 1; i <= settings.faultRuns(); i++) {
                faultRuns.add(faultRun(i, dir.resolve("fault-run-" + i), outputDir.resolve("logs").resolve("fault-run-" + i)));
            }
        } finally {
            Utils.delete(dir.toFile());
        }
        List<Throughput> throughput = INSTANCES.stream().map(n -> {
            List<FloodResult> runs = floods.stream().filter(r -> r.app().equals(FloodRun.instances(n))).toList();
            return new Throughput(n, Spread.of(runs.stream().map(FloodResult::eventsPerSec).toList()), runs);
        }).toList();
        Results results = Results.of(Runtime.getRuntime().availableProcessors(), before, Resources.loadAverage(),
                settings, throughput, faultRuns, LadderRun.round((System.nanoTime() - start) / 1e9));
        Files.write(outputDir.resolve(RESULTS_JSON), Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsBytes(results));
        Files.writeString(outputDir.resolve(RESULTS_MD), markdown(results));
        chart(results, outputDir.resolve(LATENCY_PNG));
        results.warnings().forEach(w -> progress.println("WARNING " + w));
        progress.printf("done in %.0f s, load average %s: %s, %s, %s%n", results.durationSeconds(),
                ResultsReport.load(results.loadAfter()), outputDir.resolve(RESULTS_JSON), outputDir.resolve(RESULTS_MD),
                outputDir.resolve(LATENCY_PNG));
        progress.flush();
        return results;
    }

    /** The throughput runs, on a cluster of their own: the fault runs then start on clusters that saw no flood. */
    private List<FloodResult> throughput(Path dir, Path logs) throws Exception {
        List<FloodResult> floods = new ArrayList<>();
        Path kafkaDir = dir.resolve("kafka");
        try (LocalCluster cluster = LocalCluster.start(kafkaDir, settings.nodes(), ClusterFaultRun.PARTITIONS,
                System.getProperty("java.class.path"))) {
            progress.printf("%d brokers ready: %s%n", cluster.size(), cluster.bootstrapServers());
            try (BenchCluster apps = BenchCluster.on(cluster.bootstrapServers(), cluster.replicas(), kafka,
                    ClusterFaultRun.PARTITIONS)) {
                FloodRun run = new FloodRun(apps, flood, Settle.system(flood.settle(), progress), progress);
                for (int i = 1; i <= settings.runs(); i++) {
                    // alternating which goes first, so that neither always runs on the warmer cluster
                    floods.addAll(run.scaling(i % 2 == 1 ? INSTANCES : List.of(2, 1), i));
                }
            }
        } finally {
            LocalCluster.copyLogs(kafkaDir, logs);
        }
        return floods;
    }

    /** Fault run {@code run} (from 1) on a fresh cluster, which it stops at the end. */
    private FaultRun faultRun(int run, Path dir, Path logs) throws Exception {
        LoadAverage before = Resources.loadAverage();
        progress.printf("fault run %d of %d on a fresh cluster of %d brokers, load average %s%n", run,
                settings.faultRuns(), settings.nodes(), ResultsReport.load(before));
        progress.flush();
        ClusterFaultRun.Report report;
        try {
            report = new ClusterFaultRun(new ClusterFaultRun.Settings(settings.turns(), Math.min(20, settings.turns()),
                    settings.tokensPerSecond(), Duration.ofSeconds(300), System.getProperty("java.class.path"), logs, kafka),
                    dir, progress).run(settings.nodes());
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            // the runs before and after it still count: the failure is reported with them, not instead of them
            String error = e.getMessage() + "; logs in " + logs;
            progress.printf("fault run %d failed: %s%n", run, error);
            progress.flush();
            return FaultRun.failed(run, before, Resources.loadAverage(), error);
        }
        return new FaultRun(run, before, Resources.loadAverage(), null, report.turns().size(),
                LadderRun.round(report.startupSeconds()), LadderRun.round(report.seconds()), report.faults(),
                timeline(report));
    }

    /**
     * The headline figures: the throughput per instance count and two / one (the median of the per-run ratios,
     * as the main bench's pairs), then per fault, in the order they were injected, each measure over the runs.
     */
    static List<Figure> figures(List<Throughput> throughput, List<FaultRun> faultRuns) {
        List<Figure> figures = new ArrayList<>();
        for (Throughput t : throughput) {
            figures.add(new Figure(throughputName(t.instances()), "events/s", t.eventsPerSec()));
        }
        if (throughput.size() == 2 && !throughput.get(0).runs().isEmpty()) {
            figures.add(new Figure("topology throughput, two instances / one", Figures.RATIO, Spread.of(Spread.ratios(
                    throughput.get(1).eventsPerSec().values(), throughput.get(0).eventsPerSec().values()))));
        }
        for (String fault : faultNames(faultRuns)) {
            List<Fault> runs = faultRuns.stream().flatMap(r -> r.faults().stream()).filter(f -> f.what().equals(fault))
                    .toList();
            for (Measure m : MEASURES) {
                figures.add(new Figure(fault + " SIGKILLed: " + m.what(), m.unit(),
                        Spread.of(runs.stream().map(f -> m.value().applyAsDouble(f)).toList())));
            }
        }
        return List.copyOf(figures);
    }

    static String throughputName(int instances) {
        return "topology throughput, " + instances + (instances == 1 ? " instance" : " instances");
    }

    /** The main bench's rule ("too noisy to judge" past +/-20%) on the ratio and every takeover in seconds. */
    static List<String> warnings(List<Figure> figures) {
        return Figures.warnings(figures, f -> f.unit().equals(Figures.RATIO) || f.unit().equals(SECONDS));
    }

    /** A line per failed fault run: its figures are missing from the medians. */
    static List<String> failures(List<FaultRun> faultRuns) {
        return faultRuns.stream().filter(FaultRun::failed).map(r -> String.format(Locale.ROOT,
                "fault run %d of %d failed, its figures are missing from the medians: %s", r.run(), faultRuns.size(),
                r.error())).toList();
    }

    /** The faults, in the order the runs injected them. */
    private static List<String> faultNames(List<FaultRun> faultRuns) {
        return List.copyOf(faultRuns.stream().flatMap(r -> r.faults().stream()).map(Fault::what)
                .collect(Collectors.toCollection(LinkedHashSet::new)));
    }

    /**
     * Per second of the fault run: each upsert read then, with how long its turn had waited for it
     * since its previous upsert was read (a stalled turn shows when it streams again).
     */
    static List<Second> timeline(ClusterFaultRun.Report report) {
        Map<Integer, List<Double>> waits = new TreeMap<>();
        for (List<Sighting> sightings : report.upsertSightings().values()) {
            for (int i = 1; i < sightings.size(); i++) {
                int second = (int) ((sightings.get(i).readNanos() - report.startedAtNanos()) / 1_000_000_000L);
                waits.computeIfAbsent(second, s -> new ArrayList<>())
                        .add((sightings.get(i).readNanos() - sightings.get(i - 1).readNanos()) / 1e6);
            }
        }
        return waits.entrySet().stream().map(e -> {
            List<Double> sorted = e.getValue().stream().sorted().toList();
            return new Second(e.getKey(), sorted.size(), LadderRun.round(Spread.quantile(sorted, 0.99)),
                    LadderRun.round(sorted.get(sorted.size() - 1)));
        }).toList();
    }

    static String markdown(Results r) {
        StringBuilder md = new StringBuilder();
        Settings s = r.settings();
        md.append(String.format(Locale.ROOT, "# turnstream bench --cluster %d%n%n%d cpus, load average (1 / 5 / 15 min) "
                        + "%s before, %s after; %.0f s. Throughput: %d run(s) per instance count, a flood of %,d raw events "
                        + "each. Faults: %d run(s), each on a fresh cluster, %d turns started at once.%n%n", s.nodes(),
                r.cpus(), ResultsReport.load(r.loadBefore()), ResultsReport.load(r.loadAfter()), r.durationSeconds(),
                s.runs(), s.floodEvents(), s.faultRuns(), s.turns()));
        for (String warning : r.warnings()) {
            md.append("**Warning, ").append(warning).append(".**\n\n");
        }
        md.append("## Figures: median and spread\n\n");
        md.append("Each fault's figures are seconds from the SIGKILL until a read_committed reader read, written after "
                + "it, for the last (median) turn or partition in flight: an upsert; an upsert or a live text append; "
                + "output for every partition of the raw events (a topology task); a raw event. Range is min-max of the "
                + "runs, IQR the interquartile range.\n\n");
        md.append(ResultsReport.figures(r.figures()));
        md.append("\n## Fault runs, run by run\n");
        for (FaultRun run : r.faultRuns()) {
            if (run.failed()) {
                md.append(String.format(Locale.ROOT, "%n### Run %d: failed; load average %s before, %s after%n%n%s%n",
                        run.run(), ResultsReport.load(run.loadBefore()), ResultsReport.load(run.loadAfter()), run.error()));
                continue;
            }
            md.append(String.format(Locale.ROOT, "%n### Run %d: %d turns; load average %s before, %s after; services ready "
                            + "after %.0f s, run %.0f s%n%n", run.run(), run.turns(), ResultsReport.load(run.loadBefore()),
                    ResultsReport.load(run.loadAfter()), run.startupSeconds(), run.seconds()));
            List<List<String>> rows = new ArrayList<>();
            for (Fault f : run.faults()) {
                rows.add(List.of(f.what(), String.format(Locale.ROOT, "%.0f s", f.atSeconds()), Integer.toString(f.inFlight()),
                        String.format(Locale.ROOT, "%.1f s (%.1f s)", f.upsertsAgainSeconds(), f.upsertsAgainMedianSeconds()),
                        String.format(Locale.ROOT, "%.1f s (%.1f s)", f.outputAgainSeconds(), f.outputAgainMedianSeconds()),
                        String.format(Locale.ROOT, "%.1f s (%.1f s; %d partitions)", f.partitionsAgainSeconds(),
                                f.partitionsAgainMedianSeconds(), f.partitions()),
                        String.format(Locale.ROOT, "%.1f s (%d of %d runs)", f.rawAgainSeconds(), f.rawResolved(),
                                f.rawRuns()),
                        f.partitionsAgain().entrySet().stream()
                                .map(e -> String.format(Locale.ROOT, "%d: %.1f s", e.getKey(), e.getValue()))
                                .collect(Collectors.joining(", "))));
            }
            md.append(ResultsReport.table(List.of("fault", "at", "turns in flight", "upserts again (median turn)",
                    "upserts or appends again (median turn)", "every task partition again (median)", "raw events again",
                    "per task partition"), rows));
        }
        md.append("\nLatency through each fault, every run: ").append(LATENCY_PNG).append('\n');
        return md.toString();
    }

    /**
     * One panel per fault, stacked: each run's longest wait per second for the next upsert, from the SIGKILL
     * (x = 0), between the run's previous fault (or {@value #CHART_BEFORE_SECONDS} s before) and its next: the
     * runs' lines side by side are the spread. The panels share their axes, so they compare at a glance.
     */
    static void chart(Results r, Path file) throws IOException {
        System.setProperty("java.awt.headless", "true");
        List<String> faults = faultNames(r.faultRuns());
        List<List<RunLine>> lines = faults.stream().map(fault -> r.faultRuns().stream()
                .map(run -> RunLine.of(run, fault)).filter(p -> p.x().length > 0).toList()).toList();
        double right = lines.stream().flatMap(List::stream).mapToDouble(p -> p.x()[p.x().length - 1]).max().orElse(1);
        double top = lines.stream().flatMap(List::stream).flatMapToDouble(p -> Arrays.stream(p.y()))
                .max().orElse(10);
        BufferedImage image = new BufferedImage(PANEL_WIDTH, PANEL_HEIGHT * Math.max(1, faults.size()),
                BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        try {
            for (int i = 0; i < faults.size(); i++) {
                XYChart chart = new XYChartBuilder().width(PANEL_WIDTH).height(PANEL_HEIGHT)
                        .title(faults.get(i) + " SIGKILLed at 0 s: per second, the longest wait of a turn for its next "
                                + "upsert")
                        .xAxisTitle("seconds since the SIGKILL").yAxisTitle("wait (ms, log)").build();
                chart.getStyler().setYAxisLogarithmic(true);
                chart.getStyler().setYAxisMin(10.0);
                chart.getStyler().setYAxisMax(Math.max(100, top * 1.5));
                chart.getStyler().setXAxisMin(-CHART_BEFORE_SECONDS);
                chart.getStyler().setXAxisMax(right);
                for (RunLine line : lines.get(i)) {
                    chart.addSeries(line.name(), line.x(), line.y()).setMarker(SeriesMarkers.NONE);
                }
                XYSeries kill = chart.addSeries("SIGKILL", new double[] {0, 0}, new double[] {10, Math.max(100, top)});
                kill.setMarker(SeriesMarkers.NONE);
                g.drawImage(BitmapEncoder.getBufferedImage(chart), 0, i * PANEL_HEIGHT, null);
            }
        } finally {
            g.dispose();
        }
        ImageIO.write(image, "png", file.toFile());
    }

    /** One run's line in a fault's panel: seconds from the SIGKILL, and that second's longest wait (ms). */
    private record RunLine(String name, double[] x, double[] y) {

        static RunLine of(FaultRun run, String what) {
            List<Fault> faults = run.faults();
            int i = faults.stream().map(Fault::what).toList().indexOf(what);
            if (i < 0) {
                return new RunLine("", new double[0], new double[0]);
            }
            Fault fault = faults.get(i);
            double from = Math.max(-CHART_BEFORE_SECONDS, i == 0 ? -CHART_BEFORE_SECONDS
                    : faults.get(i - 1).atSeconds() - fault.atSeconds());
            double to = i == faults.size() - 1 ? Double.MAX_VALUE : faults.get(i + 1).atSeconds() - fault.atSeconds();
            List<Second> seconds = run.timeline().stream()
                    .filter(sec -> sec.second() - fault.atSeconds() >= from && sec.second() - fault.atSeconds() < to)
                    .toList();
            return new RunLine(String.format(Locale.ROOT, "run %d (%d turns in flight)", run.run(), fault.inFlight()),
                    seconds.stream().mapToDouble(sec -> sec.second() - fault.atSeconds()).toArray(),
                    seconds.stream().mapToDouble(sec -> Math.max(10, sec.maxWaitMs())).toArray());
        }
    }
}
