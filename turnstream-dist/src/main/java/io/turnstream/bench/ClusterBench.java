package io.turnstream.bench;

import io.turnstream.bench.BenchResults.FloodResult;
import io.turnstream.bench.BenchResults.LoadAverage;
import io.turnstream.cluster.ClusterFaultRun;
import io.turnstream.cluster.LocalCluster;
import io.turnstream.cluster.TopicFollower.Sighting;
import io.turnstream.model.Json;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.kafka.common.utils.Utils;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * {@code turnstream bench --cluster N}: the fault suite as a benchmark, on a local cluster of N broker
 * processes. First the topology's throughput with one and with two instances (the flood of
 * {@code bench --only flood}, the topology alone, on the cluster's replicated topics), then the
 * fault run of {@link ClusterFaultRun} (two instances of each service, a topology instance, an
 * executor, a gateway and a broker SIGKILLed in turn while the turns stream): each fault's takeover,
 * and the latency a UI sees through the faults (per second, the longest wait of a turn for its next
 * upsert). Writes {@code cluster-results.json}, {@code cluster-results.md} and
 * {@code cluster-faults-latency.png}, and the services' and brokers' logs to {@code logs/}.
 */
public final class ClusterBench {

    public static final String RESULTS_JSON = "cluster-results.json";
    public static final String RESULTS_MD = "cluster-results.md";
    public static final String LATENCY_PNG = "cluster-faults-latency.png";
    private static final List<Integer> INSTANCES = List.of(1, 2);

    /**
     * How a run is made.
     *
     * @param nodes broker processes
     * @param runs throughput runs per instance count, alternating one and two instances
     * @param floodEvents raw events of each throughput run
     * @param turns turns started at once in the fault run
     * @param tokensPerSecond the simulated provider's rate in the fault run
     */
    public record Settings(int nodes, int runs, int floodEvents, int turns, int tokensPerSecond) {

        public static Settings full(int nodes) {
            return new Settings(nodes, 3, 100_000, 200, 5);
        }

        public static Settings quick(int nodes) {
            return new Settings(nodes, 1, 10_000, 20, 5);
        }

        /** The same run with {@code count} turns started at once in the fault run. */
        public Settings withTurns(int count) {
            if (count < 1) {
                throw new IllegalArgumentException("turns must be at least 1, got " + count);
            }
            return new Settings(nodes, runs, floodEvents, count, tokensPerSecond);
        }
    }

    /** One second of the fault run: how many upserts were read, and the longest and p99 wait before one. */
    public record Second(int second, int upserts, double p99WaitMs, double maxWaitMs) {
    }

    /** Throughput of the topology with {@code instances} instances over the runs. */
    public record Throughput(int instances, Spread eventsPerSec, List<FloodResult> runs) {
    }

    public record Results(int cpus, LoadAverage loadBefore, LoadAverage loadAfter, Settings settings,
                          List<Throughput> throughput, double twoToOne, List<ClusterFaultRun.Fault> faults,
                          int turns, double faultRunSeconds, double startupSeconds, List<Second> timeline,
                          double durationSeconds) {
    }

    private final Settings settings;
    private final BenchConfig flood;
    private final Properties kafka;
    private final PrintWriter progress;

    /**
     * @param kafka Kafka and Streams properties of the topology in the throughput runs, and added to every
     *     service's configuration in the fault run
     */
    public ClusterBench(Settings settings, Properties kafka, PrintWriter progress) {
        this.settings = settings;
        BenchConfig d = BenchConfig.quick();
        this.flood = new BenchConfig(d.ladder(), d.warmup(), d.measure(), d.drainLimit(), d.tokensPerSecond(),
                d.tokensPerDelta(), d.reasoningTokens(), d.messageTokens(), settings.floodEvents(), d.itemLengths(),
                d.growthFraction(), d.targetStep(), d.latencyTargetMs(), ClusterFaultRun.PARTITIONS, d.seed(),
                settings.runs(), d.largestStepPairs(), d.amplificationRuns(), d.phases());
        this.kafka = kafka;
        this.progress = progress;
    }

    public Results run(Path outputDir) throws Exception {
        long start = System.nanoTime();
        Files.createDirectories(outputDir);
        LoadAverage before = Resources.loadAverage();
        progress.printf("turnstream bench --cluster %d: %d cpus, load average %s; results in %s%n", settings.nodes(),
                Runtime.getRuntime().availableProcessors(), ResultsReport.load(before), outputDir);
        progress.flush();
        Path dir = Files.createTempDirectory("turnstream-bench-cluster");
        String classpath = System.getProperty("java.class.path");
        List<FloodResult> floods = new ArrayList<>();
        ClusterFaultRun.Report report;
        try (LocalCluster cluster = LocalCluster.start(dir.resolve("kafka"), settings.nodes(), ClusterFaultRun.PARTITIONS,
                classpath)) {
            progress.printf("%d brokers ready: %s%n", cluster.size(), cluster.bootstrapServers());
            try (BenchCluster apps = BenchCluster.on(cluster.bootstrapServers(), cluster.replicas(), kafka,
                    ClusterFaultRun.PARTITIONS)) {
                FloodRun run = new FloodRun(apps, flood, progress);
                for (int i = 1; i <= settings.runs(); i++) {
                    // alternating which goes first, so that neither always runs on the warmer cluster
                    floods.addAll(run.scaling(i % 2 == 1 ? INSTANCES : List.of(2, 1), i));
                }
            }
            report = new ClusterFaultRun(new ClusterFaultRun.Settings(settings.turns(), Math.min(20, settings.turns()),
                    settings.tokensPerSecond(), Duration.ofSeconds(300), classpath, outputDir.resolve("logs"), kafka),
                    dir.resolve("faults"), progress)
                    .run(cluster);
        } finally {
            LocalCluster.copyLogs(dir.resolve("kafka"), outputDir.resolve("logs"));
            Utils.delete(dir.toFile());
        }
        List<Throughput> throughput = INSTANCES.stream().map(n -> {
            List<FloodResult> runs = floods.stream().filter(r -> r.app().equals(FloodRun.instances(n))).toList();
            return new Throughput(n, Spread.of(runs.stream().map(FloodResult::eventsPerSec).toList()), runs);
        }).toList();
        double twoToOne = throughput.get(1).eventsPerSec().median() / throughput.get(0).eventsPerSec().median();
        Results results = new Results(Runtime.getRuntime().availableProcessors(), before, Resources.loadAverage(),
                settings, throughput, LadderRun.round(twoToOne), report.faults(), report.turns().size(),
                LadderRun.round(report.seconds()), LadderRun.round(report.startupSeconds()), timeline(report),
                LadderRun.round((System.nanoTime() - start) / 1e9));
        Files.write(outputDir.resolve(RESULTS_JSON), Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsBytes(results));
        Files.writeString(outputDir.resolve(RESULTS_MD), markdown(results));
        chart(results, outputDir.resolve(LATENCY_PNG));
        progress.printf("done in %.0f s: %s, %s, %s%n", results.durationSeconds(), outputDir.resolve(RESULTS_JSON),
                outputDir.resolve(RESULTS_MD), outputDir.resolve(LATENCY_PNG));
        progress.flush();
        return results;
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
        md.append(String.format(Locale.ROOT, "# turnstream bench --cluster %d%n%n%d cpus, load average %s before, %s after; "
                        + "%.0f s.%n%n", r.settings().nodes(), r.cpus(), ResultsReport.load(r.loadBefore()),
                ResultsReport.load(r.loadAfter()), r.durationSeconds()));
        md.append(String.format(Locale.ROOT, "## Topology throughput (flood of %,d raw events, %d run(s) each)%n%n",
                r.settings().floodEvents(), r.settings().runs()));
        md.append("| instances | events/s, median | range |\n|---|---|---|\n");
        for (Throughput t : r.throughput()) {
            md.append(String.format(Locale.ROOT, "| %d | %,.0f | %,.0f-%,.0f |%n", t.instances(), t.eventsPerSec().median(),
                    t.eventsPerSec().min(), t.eventsPerSec().max()));
        }
        md.append(String.format(Locale.ROOT, "%ntwo instances / one: %.2fx%n%n", r.twoToOne()));
        md.append(String.format(Locale.ROOT, "## Faults (%d turns, %d started at once; services ready after %.0f s, "
                + "run %.0f s)%n%n", r.turns(), r.settings().turns(), r.startupSeconds(), r.faultRunSeconds()));
        md.append("Seconds from the SIGKILL until a read_committed reader read, written after it, for the last (median) "
                + "turn or partition in flight: an upsert; an upsert or a live text append; output for every partition "
                + "of the raw events (a topology task); a raw event.\n\n");
        md.append("| fault | at | turns in flight | upserts again after (median turn) | upserts or appends again "
                + "(median turn) | every task partition again (median) | raw events again after |\n"
                + "|---|---|---|---|---|---|---|\n");
        for (ClusterFaultRun.Fault f : r.faults()) {
            md.append(String.format(Locale.ROOT, "| %s | %.0f s | %d | %.1f s (%.1f s) | %.1f s (%.1f s) "
                            + "| %.1f s (%.1f s; %d partitions) | %.1f s (%d of %d runs) |%n",
                    f.what(), f.atSeconds(), f.inFlight(), f.upsertsAgainSeconds(), f.upsertsAgainMedianSeconds(),
                    f.outputAgainSeconds(), f.outputAgainMedianSeconds(), f.partitionsAgainSeconds(),
                    f.partitionsAgainMedianSeconds(), f.partitions(), f.rawAgainSeconds(), f.rawResolved(), f.rawRuns()));
        }
        md.append("\nPer partition of the raw events, output again after:\n\n");
        for (ClusterFaultRun.Fault f : r.faults()) {
            md.append("- ").append(f.what()).append(": ").append(f.partitionsAgain().entrySet().stream()
                    .map(e -> String.format(Locale.ROOT, "%d: %.1f s", e.getKey(), e.getValue()))
                    .collect(Collectors.joining(", "))).append('\n');
        }
        md.append("\nLatency through the faults: ").append(LATENCY_PNG).append('\n');
        return md.toString();
    }

    private static void chart(Results r, Path file) throws IOException {
        System.setProperty("java.awt.headless", "true");
        XYChart chart = new XYChartBuilder().width(900).height(500)
                .title("Through the faults: per second, how long turns waited for their next upsert")
                .xAxisTitle("seconds since the fault run began").yAxisTitle("wait (ms, log)").build();
        chart.getStyler().setYAxisLogarithmic(true);
        double[] x = r.timeline().stream().mapToDouble(Second::second).toArray();
        line(chart, "longest wait", x, r.timeline().stream().mapToDouble(s -> Math.max(1, s.maxWaitMs())).toArray());
        line(chart, "p99 wait", x, r.timeline().stream().mapToDouble(s -> Math.max(1, s.p99WaitMs())).toArray());
        double top = r.timeline().stream().mapToDouble(Second::maxWaitMs).max().orElse(1);
        for (ClusterFaultRun.Fault f : r.faults()) {
            XYSeries kill = chart.addSeries(f.what() + " SIGKILLed", new double[] {f.atSeconds(), f.atSeconds()},
                    new double[] {1, Math.max(2, top)});
            kill.setMarker(SeriesMarkers.NONE);
        }
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    private static void line(XYChart chart, String name, double[] x, double[] y) {
        if (x.length > 0) {
            chart.addSeries(name, x, y).setMarker(SeriesMarkers.NONE);
        }
    }
}
