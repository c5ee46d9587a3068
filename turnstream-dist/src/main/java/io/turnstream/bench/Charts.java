package io.turnstream.bench;

import io.turnstream.bench.BenchResults.Amplification;
import io.turnstream.bench.BenchResults.Figure;
import io.turnstream.bench.BenchResults.LadderStep;
import io.turnstream.bench.BenchResults.StepPairs;
import java.awt.Color;
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
import org.knowm.xchart.style.lines.SeriesLines;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The charts of a run as PNG: the spread of the per-pair ratios, latency against load, and write
 * amplification against item length; each where its phase ran.
 */
final class Charts {

    static final String SPREAD_PNG = "ratios-spread.png";
    static final String LATENCY_PNG = "latency-vs-load.png";
    static final String AMPLIFICATION_PNG = "amplification-vs-length.png";
    private static final Color EMIT = new Color(230, 140, 0);
    private static final Color APPENDS = new Color(150, 40, 170);

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
        BoxChart chart = new BoxChartBuilder().width(200 + 250 * ratios.size()).height(500)
                .title("Topology / baseline, one value per interleaved pair").yAxisTitle("ratio").build();
        for (Figure f : ratios) {
            chart.addSeries(label(f.name()), f.spread().values().stream().mapToDouble(Double::doubleValue).toArray());
        }
        return chart;
    }

    /** Medians per step as lines, every run's p99 as points: the spread shows as a column of points. */
    private static XYChart latency(BenchResults results) {
        XYChart chart = new XYChartBuilder().width(900).height(500)
                .title("Latency to a read_committed reader vs load (lines: medians)")
                .xAxisTitle("concurrent turns").yAxisTitle("latency (ms, log)").build();
        chart.getStyler().setYAxisLogarithmic(true);
        List<StepPairs> ladder = results.ladder();
        double[] turns = ladder.stream().mapToDouble(StepPairs::turns).toArray();
        series(chart, "emit p50", turns, medians(ladder, StepPairs::topology, s -> s.emitLatency().p50()));
        paint(series(chart, "emit p99", turns, medians(ladder, StepPairs::topology, s -> s.emitLatency().p99())), EMIT);
        paint(series(chart, "content p99 through appends", turns,
                medians(ladder, StepPairs::topology, s -> s.appendLatency().p99())), APPENDS);
        series(chart, "content p99 through upserts (every delta)", turns,
                medians(ladder, StepPairs::topology, s -> s.contentLatency().p99()));
        List<StepPairs> withBaseline = ladder.stream().filter(s -> !s.passThrough().isEmpty()).toList();
        if (!withBaseline.isEmpty()) {
            series(chart, "pass-through emit p99", withBaseline.stream().mapToDouble(StepPairs::turns).toArray(),
                    medians(withBaseline, StepPairs::passThrough, s -> s.emitLatency().p99()));
        }
        scatter(chart, "topology emit p99, each run", ladder, StepPairs::topology);
        if (!withBaseline.isEmpty()) {
            scatter(chart, "pass-through emit p99, each run", withBaseline, StepPairs::passThrough);
        }
        target(chart, "emit p99 target", EMIT, turns, Bench.EMIT_P99_TARGET_MS);
        target(chart, "appends p99 target", APPENDS, turns, Bench.APPEND_P99_TARGET_MS,
                Bench.APPEND_P99_TARGET_MS_AT_1000);
        return chart;
    }

    /** A target as a dashed step line: {@code limits} apply up to 200 turns and from 1,000 turns on. */
    private static void target(XYChart chart, String name, Color color, double[] turns, double... limits) {
        double[] y = new double[turns.length];
        for (int i = 0; i < turns.length; i++) {
            y[i] = limits.length > 1 && turns[i] >= Bench.LARGE_STEP ? limits[1] : limits[0];
        }
        XYSeries series = chart.addSeries(name, turns, y);
        series.setMarker(SeriesMarkers.NONE);
        series.setLineStyle(SeriesLines.DASH_DASH);
        paint(series, color);
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

    /** A measured line and its target share a colour. */
    private static void paint(XYSeries series, Color color) {
        series.setLineColor(color);
        series.setMarkerColor(color);
    }

    private static XYSeries series(XYChart chart, String name, double[] x, double[] y) {
        XYSeries series = chart.addSeries(name, x, y);
        series.setMarker(SeriesMarkers.CIRCLE);
        return series;
    }

    /** "emit p99 at 200 turns, topology / pass-through" as "emit p99 @200 / pass-through": narrower than its box. */
    static String label(String figure) {
        return figure.replace(", topology / ", " / ").replace("pass-through Streams", "pass-through")
                .replace("flood throughput", "flood").replace("CPU per event", "CPU/event")
                .replaceAll(" at (\\d+) turns", " @$1");
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
