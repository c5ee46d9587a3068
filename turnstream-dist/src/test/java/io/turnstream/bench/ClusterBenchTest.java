package io.turnstream.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.bench.BenchResults.Figure;
import io.turnstream.bench.BenchResults.FloodResult;
import io.turnstream.cluster.ClusterFaultRun;
import io.turnstream.cluster.ClusterFaultRun.Fault;
import io.turnstream.cluster.TopicFollower.Sighting;
import io.turnstream.model.Json;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@code bench --cluster} makes of its fault runs: the waits a UI saw, per second; every figure's median and
 * spread over the runs, its warnings, results files, chart and comparison.
 */
class ClusterBenchTest {

    private static final long START = 5_000_000_000L;

    @Test
    void eachUpsertCountsInTheSecondItWasReadWithHowLongItsTurnWaitedForIt() {
        ClusterFaultRun.Report report = report(Map.of(
                // streams every 200 ms, then waits 8 s through a fault and streams again at 10.1 s
                "turn-1", List.of(read(1.0), read(1.2), read(1.4), read(2.1), read(10.1)),
                "turn-2", List.of(read(1.5), read(10.5))));

        assertThat(ClusterBench.timeline(report)).containsExactly(
                new ClusterBench.Second(1, 2, 200.0, 200.0),
                new ClusterBench.Second(2, 1, 700.0, 700.0),
                new ClusterBench.Second(10, 2, 8990.0, 9000.0));
    }

    @Test
    void aTurnWithOneUpsertHasNoWait() {
        assertThat(ClusterBench.timeline(report(Map.of("turn-1", List.of(read(3.0)))))).isEmpty();
    }

    @Test
    void everyFaultFigureIsTheMedianAndSpreadOfItsRunsInTheOrderTheFaultsCame() {
        List<ClusterBench.FaultRun> runs = List.of(
                run(1, fault("topology instance", 31, 200, 23.7), fault("gateway", 77, 34, 10.5)),
                run(2, fault("topology instance", 30, 200, 18.5), fault("gateway", 80, 144, 9.5)),
                run(3, fault("topology instance", 33, 190, 20.1), fault("gateway", 75, 60, 9.9)));

        List<Figure> figures = ClusterBench.figures(throughput(), runs);

        assertThat(figures).extracting(Figure::name).startsWith(
                "topology throughput, 1 instance", "topology throughput, 2 instances",
                "topology throughput, two instances / one", "topology instance SIGKILLed: turns in flight",
                "topology instance SIGKILLed: upserts again, last turn");
        assertThat(figures).hasSize(3 + 2 * 8);
        Figure partitions = find(figures, "topology instance SIGKILLed: every task partition again");
        assertThat(partitions.unit()).isEqualTo("s");
        assertThat(partitions.spread().values()).containsExactly(23.7, 18.5, 20.1);
        assertThat(partitions.spread().median()).isEqualTo(20.1);
        assertThat(partitions.spread().min()).isEqualTo(18.5);
        assertThat(partitions.spread().q3()).isCloseTo(21.9, within(1e-9));
        assertThat(find(figures, "gateway SIGKILLed: turns in flight").spread().values()).containsExactly(34.0, 144.0, 60.0);
        // per run, not a ratio of medians: 9,000 / 8,000 and 7,000 / 10,000
        assertThat(find(figures, "topology throughput, two instances / one").spread().values())
                .containsExactly(9_000.0 / 8_000, 7_000.0 / 10_000);
    }

    @Test
    void aTakeoverOrARatioWhoseRangeReachesPastTwentyPercentIsTooNoisyToJudgeACountIsNot() {
        List<ClusterBench.FaultRun> runs = List.of(run(1, fault("gateway", 77, 34, 10.5)),
                run(2, fault("gateway", 80, 144, 9.5)), run(3, fault("gateway", 75, 60, 4.0)));

        List<String> warnings = ClusterBench.warnings(ClusterBench.figures(throughput(), runs));

        assertThat(warnings).anySatisfy(w -> assertThat(w)
                .startsWith("too noisy to judge: gateway SIGKILLed: every task partition again, median 9.50 s, "
                        + "range 4.00 s-10.5 s (-58% / +11%"));
        assertThat(warnings).anySatisfy(w -> assertThat(w).startsWith("too noisy to judge: topology throughput, two "
                + "instances / one"));
        assertThat(warnings).noneMatch(w -> w.contains("turns in flight") || w.contains("events/s")
                || w.contains("1 instance,"));
        // the same takeovers within +/-20%: nothing to warn of
        List<ClusterBench.FaultRun> steady = List.of(run(1, fault("gateway", 77, 34, 10.5)),
                run(2, fault("gateway", 80, 144, 9.5)));
        assertThat(ClusterBench.warnings(ClusterBench.figures(List.of(), steady))).isEmpty();
    }

    @Test
    void theResultsKeepEveryRunAndTheMarkdownGivesTheSpreadThenEachRun() throws Exception {
        ClusterBench.Results results = results(List.of(
                run(1, fault("topology instance", 31, 200, 23.7), fault("gateway", 77, 34, 10.5)),
                run(2, fault("topology instance", 30, 200, 18.5), fault("gateway", 80, 144, 9.5))));

        JsonNode json = Json.MAPPER.readTree(Json.MAPPER.writeValueAsString(results));

        assertThat(json.at("/faultRuns/1/faults/1/partitionsAgainSeconds").asDouble()).isEqualTo(9.5);
        assertThat(json.at("/faultRuns/0/faults/0/killedAt").asText()).isEqualTo("2026-11-27T11:30:00Z");
        assertThat(json.at("/faultRuns/0/timeline/0/maxWaitMs").asDouble()).isEqualTo(1000);
        assertThat(json.at("/faultRuns/1/loadBefore/one").asDouble()).isEqualTo(2.0);
        assertThat(json.at("/figures/3/spread/values")).hasSize(2);
        assertThat(json.at("/settings/faultRuns").asInt()).isEqualTo(2);
        assertThat(ClusterBench.markdown(results))
                .contains("Faults: 2 run(s), each on a fresh cluster, 20 turns started at once.")
                .contains("| topology instance SIGKILLed: every task partition again | 21.1 s | 18.5 s-23.7 s "
                        + "| -12% / +12% | 19.8 s-22.4 s | 2 |")
                .contains("### Run 2: 60 turns; load average 2.00 / 2.00 / 2.00 before")
                .contains("| gateway | 80 s | 144 | 9.5 s (0.4 s) | 9.5 s (0.4 s) | 9.5 s (0.4 s; 2 partitions) "
                        + "| 9.5 s (144 of 144 runs) | 0: 0.4 s, 3: 9.5 s |");
    }

    @Test
    void theChartHasAPanelPerFaultWithEveryRunsLine(@TempDir Path dir) throws Exception {
        ClusterBench.Results results = results(List.of(
                run(1, fault("topology instance", 31, 200, 23.7), fault("gateway", 77, 34, 10.5)),
                run(2, fault("topology instance", 30, 200, 18.5), fault("gateway", 80, 144, 9.5))));
        Path png = dir.resolve(ClusterBench.LATENCY_PNG);

        ClusterBench.chart(results, png);

        BufferedImage image = ImageIO.read(png.toFile());
        assertThat(image.getHeight()).isEqualTo(2 * ClusterBench.PANEL_HEIGHT);
        assertThat(image.getWidth()).isEqualTo(ClusterBench.PANEL_WIDTH);
    }

    @Test
    void aFailedFaultRunIsLeftOutOfTheMediansAndSaidSoInTheWarningsAndItsRunsSection(@TempDir Path dir) throws Exception {
        BenchResults.LoadAverage load = new BenchResults.LoadAverage(4.0, 4.0, 4.0);
        ClusterBench.Results results = results(List.of(run(1, fault("gateway", 77, 34, 10.5)),
                ClusterBench.FaultRun.failed(2, load, load, "not reached within 300 s: every one of the 20 turns"),
                run(3, fault("gateway", 75, 60, 9.9))));

        assertThat(find(results.figures(), "gateway SIGKILLed: every task partition again").spread().values())
                .containsExactly(10.5, 9.9);
        assertThat(results.failures()).containsExactly("fault run 2 of 3 failed, its figures are missing "
                + "from the medians: not reached within 300 s: every one of the 20 turns");
        assertThat(results.warnings()).first().asString().isEqualTo("fault run 2 of 3 failed, its figures are missing "
                + "from the medians: not reached within 300 s: every one of the 20 turns");
        assertThat(ClusterBench.markdown(results))
                .contains("**Warning, fault run 2 of 3 failed, its figures are missing from the medians")
                .contains("### Run 2: failed; load average 4.00 / 4.00 / 4.00 before");
        ClusterBench.chart(results, dir.resolve(ClusterBench.LATENCY_PNG));
        assertThat(ImageIO.read(dir.resolve(ClusterBench.LATENCY_PNG).toFile()).getHeight())
                .isEqualTo(ClusterBench.PANEL_HEIGHT);
    }

    @Test
    void aClusterRunComparesWithAnEarlierOneFigureByFigure(@TempDir Path dir) throws Exception {
        ClusterBench.Results before = results(List.of(run(1, fault("gateway", 77, 34, 10.5)),
                run(2, fault("gateway", 80, 144, 10.9)), run(3, fault("gateway", 75, 60, 10.2))));
        ClusterBench.Results after = results(List.of(run(1, fault("gateway", 77, 34, 6.1)),
                run(2, fault("gateway", 80, 144, 6.5)), run(3, fault("gateway", 75, 60, 5.9))));
        Path base = Files.write(dir.resolve(ClusterBench.RESULTS_JSON), Json.MAPPER.writeValueAsBytes(before));

        List<Comparison.Row> rows = Comparison.compare(Comparison.readFigures(base, Comparison.Source.CLUSTER),
                after.figures());

        assertThat(row(rows, "gateway SIGKILLed: every task partition again").verdict())
                .isEqualTo(Comparison.Verdict.CHANGE);
        assertThat(row(rows, "gateway SIGKILLed: turns in flight").verdict()).isEqualTo(Comparison.Verdict.NOISE);
        assertThatThrownBy(() -> Comparison.readFigures(base, Comparison.Source.BENCH))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("is a cluster-results.json of turnstream bench --cluster")
                .hasMessageContaining("compare turnstream bench with an earlier results.json");
    }

    @Test
    void turnsAndFaultRunsChangeOnlyTheFaultRunsAndAreAtLeastOne() {
        assertThat(ClusterBench.Settings.full(3).withTurns(50).withFaultRuns(5))
                .isEqualTo(new ClusterBench.Settings(3, 3, 100_000, 50, 5, 5));
        assertThat(ClusterBench.Settings.full(3).faultRuns()).isEqualTo(3);
        assertThat(ClusterBench.Settings.quick(3).faultRuns()).isEqualTo(1);
        assertThatThrownBy(() -> ClusterBench.Settings.full(3).withFaultRuns(0))
                .hasMessage("fault runs must be at least 1, got 0");
    }

    /** A fault whose takeovers (every figure but the median turn's and partition's) all took {@code seconds}. */
    private static Fault fault(String what, double at, int inFlight, double seconds) {
        return new Fault(what, "2026-11-27T11:30:00Z", at, inFlight, inFlight, seconds, 0.4, "turn-7", seconds, 0.4,
                seconds, 0.4, 2, new TreeMap<>(Map.of(0, 0.4, 3, seconds)), seconds, inFlight, inFlight);
    }

    private static ClusterBench.FaultRun run(int run, Fault... faults) {
        BenchResults.LoadAverage load = new BenchResults.LoadAverage((double) run, (double) run, (double) run);
        return new ClusterBench.FaultRun(run, load, load, null, 60, 14, 113, List.of(faults),
                List.of(new ClusterBench.Second(70, 3, 900, 1000), new ClusterBench.Second(80, 3, 900, 9000)));
    }

    /** Two throughput runs: 8,000 and 10,000 events/s with one instance, 9,000 and 7,000 with two. */
    private static List<ClusterBench.Throughput> throughput() {
        return List.of(throughput(1, 8_000, 10_000), throughput(2, 9_000, 7_000));
    }

    private static ClusterBench.Throughput throughput(int instances, double... eventsPerSec) {
        List<FloodResult> runs = new ArrayList<>();
        for (int i = 0; i < eventsPerSec.length; i++) {
            runs.add(new FloodResult(FloodRun.instances(instances), i + 1, 100_000, 100_000 / eventsPerSec[i],
                    eventsPerSec[i], 0, 0, 0, 0, 0, 0, 0L));
        }
        return new ClusterBench.Throughput(instances, Spread.of(runs.stream().map(FloodResult::eventsPerSec).toList()),
                runs);
    }

    private static ClusterBench.Results results(List<ClusterBench.FaultRun> runs) {
        BenchResults.LoadAverage load = new BenchResults.LoadAverage(1.0, 2.0, 3.0);
        return ClusterBench.Results.of(2, load, load, ClusterBench.Settings.quick(3).withFaultRuns(runs.size()),
                throughput(), runs, 400);
    }

    private static Figure find(List<Figure> figures, String name) {
        return Figures.find(figures, name).orElseThrow(() -> new AssertionError("no figure " + name));
    }

    private static Comparison.Row row(List<Comparison.Row> rows, String name) {
        return rows.stream().filter(r -> r.name().equals(name)).findFirst().orElseThrow();
    }

    private static Sighting read(double seconds) {
        return new Sighting(0, START + (long) (seconds * 1e9));
    }

    private static ClusterFaultRun.Report report(Map<String, List<Sighting>> sightings) {
        return new ClusterFaultRun.Report(List.copyOf(sightings.keySet()), Map.of(), List.of(), 0, 0, START, List.of(),
                List.of(), List.of(), List.of(), sightings);
    }
}
