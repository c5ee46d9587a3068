package io.turnstream.bench;

import io.turnstream.bench.BenchResults.Amplification;
import io.turnstream.bench.BenchResults.Figure;
import io.turnstream.bench.BenchResults.LadderStep;
import io.turnstream.bench.BenchResults.StepPairs;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.BoxChart;
import org.knowm.xchart.BoxChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.internal.chartpart.Chart;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The charts of a run as PNG: the spread of the per-pair ratios, latency against load, and write
 * amplification against item length; each where its phase ran.
 */
final class Charts {

    static final String SPREAD_PNG = "ratios-spread.png";
    static final String LATENCY_PNG = "latency-vs-load.png";
    static final String AMPLIFICATION_PNG = "amplification-vs-length.png";

    private Charts() {
    }

    static void write(BenchResults results, Path dir) throws IOException {
        System.setProperty("java.awt.headless", "true");
        List<Figure> ratios = results.figures().stream()
                .filter(f -> f.name().contains(Figures.TO_BASELINE) && f.spread().runs() > 1).toList();
        if (!ratios.isEmpty()) {
            save(spread(ratios), dir.resolve(SPREAD_PNG));
        }
        if (!results.ladder().isEmpty()) {
            save(latency(results), dir.resolve(LATENCY_PNG));
        }
        if (!results.amplification().isEmpty()) {
            save(amplification(results), dir.resolve(AMPLIFICATION_PNG));
        }
    }

    private static void save(Chart<?, ?> chart, Path file) throws IOException {
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    /** One box per ratio: its runs' quartiles and range, so a wide one stands out. */
    private static BoxChart spread(List<Figure> ratios) {
        BoxChart chart = new BoxChartBuilder().width(200 + 270 * ratios.size()).height(500)
                .title("Ratios to the baselines, one value per interleaved pair").yAxisTitle("ratio").build();
        for (Figure f : ratios) {
            chart.addSeries(label(f.name()), f.spread().values().stream().mapToDouble(Double::doubleValue).toArray());
        }
        return chart;
    }

    /** Medians per step as lines, every run's p99 as points: the spread shows as a column of points. */
    private static XYChart latency(BenchResults results) {
        XYChart chart = new XYChartBuilder().width(800).height(500)
                .title("Latency to a read_committed consumer vs load (lines: medians of the runs)")
                .xAxisTitle("concurrent turns").yAxisTitle("latency (ms, log)").build();
        chart.getStyler().setYAxisLogarithmic(true);
        List<StepPairs> ladder = results.ladder();
        double[] turns = ladder.stream().mapToDouble(StepPairs::turns).toArray();
        series(chart, "emit p50", turns, medians(ladder, StepPairs::topology, s -> s.emitLatency().p50()));
        series(chart, "emit p99", turns, medians(ladder, StepPairs::topology, s -> s.emitLatency().p99()));
        series(chart, "content p99 (every delta)", turns, medians(ladder, StepPairs::topology, s -> s.contentLatency().p99()));
        List<StepPairs> withBaseline = ladder.stream().filter(s -> !s.passThrough().isEmpty()).toList();
        if (!withBaseline.isEmpty()) {
            series(chart, "pass-through emit p99", withBaseline.stream().mapToDouble(StepPairs::turns).toArray(),
                    medians(withBaseline, StepPairs::passThrough, s -> s.emitLatency().p99()));
        }
        scatter(chart, "topology emit p99, each run", ladder, StepPairs::topology);
        if (!withBaseline.isEmpty()) {
            scatter(chart, "pass-through emit p99, each run", withBaseline, StepPairs::passThrough);
        }
        series(chart, "target " + results.settings().latencyTargetMs() + " ms", new double[] {turns[0], turns[turns.length - 1]},
                new double[] {results.settings().latencyTargetMs(), results.settings().latencyTargetMs()});
        return chart;
    }

    private static double[] medians(List<StepPairs> steps, Function<StepPairs, List<LadderStep>> app,
                                    ToDoubleFunction<LadderStep> latency) {
        return steps.stream().mapToDouble(step -> positive(Spread.of(app.apply(step).stream()
                .map(run -> latency.applyAsDouble(run)).toList()).median())).toArray();
    }

    /** Median over the runs, per gradient and item length. */
    private static XYChart amplification(BenchResults results) {
        XYChart chart = new XYChartBuilder().width(800).height(500)
                .title("Upsert write amplification vs item length (medians of the runs)")
                .xAxisTitle("item length (tokens, log)").yAxisTitle("upsert bytes / content bytes").build();
        chart.getStyler().setXAxisLogarithmic(true);
        List<Amplification> all = results.amplification();
        all.stream().map(Amplification::gradient).distinct().forEach(gradient -> {
            List<Integer> lengths = all.stream().filter(a -> a.gradient().equals(gradient)).map(Amplification::tokens)
                    .distinct().sorted().toList();
            double[] x = lengths.stream().mapToDouble(Integer::doubleValue).toArray();
            series(chart, gradient, x, median(all, gradient, lengths, Amplification::upsertAmplification));
            series(chart, "changelog, " + gradient, x, median(all, gradient, lengths, Amplification::changelogRatio));
        });
        return chart;
    }

    private static double[] median(List<Amplification> all, String gradient, List<Integer> lengths,
                                   ToDoubleFunction<Amplification> ratio) {
        return lengths.stream().mapToDouble(tokens -> Spread.of(all.stream()
                .filter(a -> a.gradient().equals(gradient) && a.tokens() == tokens)
                .map(a -> ratio.applyAsDouble(a)).toList()).median()).toArray();
    }

    private static void series(XYChart chart, String name, double[] x, double[] y) {
        XYSeries series = chart.addSeries(name, x, y);
        series.setMarker(SeriesMarkers.CIRCLE);
    }

    /** "flood throughput vs pass-through": short enough for the axis. */
    private static String label(String figure) {
        return figure.replace(", topology / ", " vs ").replace("pass-through Streams", "pass-through");
    }

    private static void scatter(XYChart chart, String name, List<StepPairs> steps, Function<StepPairs, List<LadderStep>> app) {
        List<LadderStep> runs = steps.stream().flatMap(step -> app.apply(step).stream()).toList();
        XYSeries series = chart.addSeries(name, runs.stream().mapToDouble(LadderStep::turns).toArray(),
                runs.stream().mapToDouble(s -> positive(s.emitLatency().p99())).toArray());
        series.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Scatter);
    }

    /** A log axis cannot show zero. */
    private static double positive(double ms) {
        return Math.max(ms, 0.1);
    }
}
