package io.turnstream.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.turnstream.bench.BenchResults.Figure;
import io.turnstream.bench.BenchResults.Amplification;
import io.turnstream.bench.BenchResults.FloodResult;
import io.turnstream.bench.BenchResults.LadderStep;
import io.turnstream.bench.BenchResults.StepPairs;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class FiguresTest {

    @Test
    void floodRatiosAreMediansOfThePerPairRatios() {
        List<FloodResult> flood = flood(new double[] {30, 20, 40}, new double[] {100, 40, 80},
                new double[] {10, 12, 11}, new double[] {5, 4, 5.5});

        List<Figure> figures = Figures.of(flood, List.of(), List.of(), List.of());

        Spread throughput = Figures.find(figures, Figures.FLOOD_VS_PASS_THROUGH).orElseThrow().spread();
        assertThat(throughput.values()).containsExactly(0.3, 0.5, 0.5);
        assertThat(throughput.median()).isEqualTo(0.5);
        Spread cpu = Figures.find(figures, Figures.FLOOD_CPU_VS_PASS_THROUGH).orElseThrow().spread();
        assertThat(cpu.values()).containsExactly(2.0, 3.0, 2.0);
        assertThat(Figures.find(figures, "flood events/s, " + FloodRun.PASS_THROUGH).orElseThrow().spread().median())
                .isEqualTo(80.0);
        assertThat(figures.get(0).name()).isEqualTo(Figures.FLOOD_VS_PASS_THROUGH);
    }

    @Test
    void aRatioWhoseRangePassesTwentyPercentIsWarnedAboutAndAQuietOneIsNot() {
        List<FloodResult> flood = flood(new double[] {30, 20, 40}, new double[] {100, 40, 80},
                new double[] {10, 10.5, 11}, new double[] {5, 5, 5});

        List<String> warnings = Figures.warnings(Figures.of(flood, List.of(), List.of(), List.of()));

        // throughput 0.3-0.5 around 0.5 (-40%) is too noisy; CPU 2.0-2.2 around 2.1 is not
        assertThat(warnings).singleElement().asString().startsWith("too noisy to judge: " + Figures.FLOOD_VS_PASS_THROUGH
                + ", median 0.50x, range 0.30x-0.50x (-40% / +0%");
    }

    @Test
    void everyLadderStepGivesItsRatiosAndFiguresFromItsOwnPairs() {
        StepPairs fifty = new StepPairs(50, List.of(topology(50, 100, 10), topology(50, 120, 12), topology(50, 0, 11)),
                List.of(passThrough(50, 50, 5), passThrough(50, 60, 4), passThrough(50, 40, 5.5)));
        StepPairs thousand = new StepPairs(1000, List.of(topology(1000, 300, 20)), List.of(passThrough(1000, 100, 4)));

        List<Figure> figures = Figures.of(List.of(), List.of(fifty, thousand), List.of(), List.of());

        // the third pair's topology showed nothing: no latency and no latency ratio, but the pair counts for CPU
        assertThat(spread(figures, "emit p99 at 50 turns, topology").values()).containsExactly(100.0, 120.0);
        assertThat(spread(figures, "emit p99 at 50 turns, topology / pass-through").values()).containsExactly(2.0, 2.0);
        assertThat(spread(figures, "CPU per event at 50 turns, topology / pass-through").values())
                .containsExactly(2.0, 3.0, 2.0);
        assertThat(spread(figures, "emit p99 at 50 turns, pass-through").median()).isEqualTo(50.0);
        assertThat(spread(figures, "deltas never shown at 50 turns, topology").values()).containsExactly(0.0, 0.0, 0.0);
        assertThat(spread(figures, Figures.emitP99(1000)).values()).containsExactly(300.0);
        assertThat(spread(figures, "emit p99 at 1000 turns, topology / pass-through").median()).isEqualTo(3.0);
        assertThat(figures).extracting(Figure::name).noneMatch(name -> name.contains("1 run"));
    }

    @Test
    void repeatedAmplificationGivesMediansAndTheWorstLengthOfEachRun() {
        List<Amplification> runs = List.of(amplification(1, 100, 7.7, 3.26), amplification(1, 1000, 5.5, 2.01),
                amplification(2, 100, 7.7, 2.90), amplification(2, 1000, 5.5, 3.10),
                amplification(3, 100, 7.7, 3.00), amplification(3, 1000, 5.5, 1.90));

        List<Figure> figures = Figures.of(List.of(), List.of(), runs, List.of());

        Spread upserts = spread(figures, Figures.upsertAmplification(1000, "seed"));
        assertThat(upserts.values()).containsExactly(5.5, 5.5, 5.5);
        assertThat(upserts.min()).isEqualTo(upserts.max());
        assertThat(spread(figures, Figures.CHANGELOG_RECORDS).values()).containsExactly(3.26, 3.10, 3.00);
        assertThat(Figures.warnings(figures)).isEmpty();
    }

    @Test
    void aFigureQuotedForTheDocsCarriesItsRangeAndQuartiles() {
        assertThat(Figures.formatWithQuartiles(Spread.of(List.of(0.29, 0.36, 0.37, 0.38, 0.60)), Figures.RATIO))
                .isEqualTo("0.37x (0.29x-0.60x; IQR 0.36x-0.38x)");
        assertThat(Figures.formatWithQuartiles(Spread.of(List.of(5.5)), Figures.RATIO)).isEqualTo("5.50x");
    }

    @Test
    void numbersReadAsTheirUnitAndASingleRunShowsNoRange() {
        assertThat(Figures.format(Spread.of(List.of(0.8, 0.82, 0.9)), Figures.RATIO)).isEqualTo("0.82x (0.80x-0.90x)");
        assertThat(Figures.format(Spread.of(List.of(92484.0, 101000.0)), "events/s")).isEqualTo("96,742 (92,484-101,000)");
        assertThat(Figures.format(Spread.of(List.of(266.0)), "ms")).isEqualTo("266 ms");
        assertThat(Figures.number(10.04, "ms")).isEqualTo("10.0 ms");
        assertThat(Figures.number(0, Figures.COUNT)).isEqualTo("0");
        assertThat(Figures.number(249271, Figures.COUNT)).isEqualTo("249,271");
    }

    private static List<FloodResult> flood(double[] topology, double[] passThrough, double[] topologyCpu,
                                           double[] passThroughCpu) {
        List<FloodResult> flood = new ArrayList<>();
        for (int i = 0; i < topology.length; i++) {
            flood.add(result(FloodRun.TOPOLOGY, i + 1, topology[i], topologyCpu[i]));
            flood.add(result(FloodRun.PASS_THROUGH, i + 1, passThrough[i], passThroughCpu[i]));
            flood.add(result(FloodRun.CONSUMER, i + 1, topology[i] * 10, 0.4));
        }
        return flood;
    }

    private static Spread spread(List<Figure> figures, String name) {
        return Figures.find(figures, name).orElseThrow(() -> new AssertionError(name + " missing")).spread();
    }

    private static LadderStep topology(int turns, double emitP99, double cpu) {
        Percentiles emit = emitP99 == 0 ? new Percentiles(0, 0, 0, 0, 0) : new Percentiles(100, emitP99 / 2, emitP99, emitP99, emitP99);
        return new LadderStep("topology", turns, 1, 1, 1, emit, emit, 0, 0, cpu, cpu, true, emit, 7.0, 2.0, 0L, 0L);
    }

    private static LadderStep passThrough(int turns, double emitP99, double cpu) {
        Percentiles emit = new Percentiles(100, emitP99 / 2, emitP99, emitP99, emitP99);
        return new LadderStep("pass-through", turns, 1, 1, 1, emit, emit, 0, 0, cpu, cpu, false,
                new Percentiles(0, 0, 0, 0, 0), null, null, 0L, 0L);
    }

    private static Amplification amplification(int run, int tokens, double upserts, double changelog) {
        return new Amplification(run, "seed", tokens, 1, 1, 1, upserts, 1, 1, changelog, 1, changelog * 2);
    }

    private static FloodResult result(String app, int pair, double eventsPerSec, double cpu) {
        return new FloodResult(app, pair, 1000, 1000 / eventsPerSec, eventsPerSec, 1000, eventsPerSec, cpu, 0, 0, 0, null);
    }
}
