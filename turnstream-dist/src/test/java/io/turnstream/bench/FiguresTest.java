package io.turnstream.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.turnstream.bench.BenchResults.Figure;
import io.turnstream.bench.BenchResults.FloodResult;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class FiguresTest {

    @Test
    void floodRatiosAreMediansOfThePerPairRatios() {
        List<FloodResult> flood = flood(new double[] {30, 20, 40}, new double[] {100, 40, 80},
                new double[] {10, 12, 11}, new double[] {5, 4, 5.5});

        List<Figure> figures = Figures.of(flood, null, List.of(), List.of(), null);

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

        List<String> warnings = Figures.warnings(Figures.of(flood, null, List.of(), List.of(), null));

        // throughput 0.3-0.5 around 0.5 (-40%) is too noisy; CPU 2.0-2.2 around 2.1 is not
        assertThat(warnings).singleElement().asString().startsWith("too noisy to judge: " + Figures.FLOOD_VS_PASS_THROUGH
                + ", median 0.50x, range 0.30x-0.50x (-40% / +0%");
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

    private static FloodResult result(String app, int pair, double eventsPerSec, double cpu) {
        return new FloodResult(app, pair, 1000, 1000 / eventsPerSec, eventsPerSec, 1000, eventsPerSec, cpu);
    }
}
