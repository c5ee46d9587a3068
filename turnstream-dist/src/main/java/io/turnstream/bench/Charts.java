package io.turnstream.bench;

import io.turnstream.bench.BenchResults.Amplification;
import io.turnstream.bench.BenchResults.Figure;
import io.turnstream.bench.BenchResults.LadderStep;
import io.turnstream.bench.BenchResults.LatencyPairs;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
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
                .filter(f -> f.unit().equals(Figures.RATIO) && f.spread().runs() > 1).toList();
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

    private static XYChart latency(BenchResults results) {
        XYChart chart = new XYChartBuilder().width(800).height(500)
                .title("Latency to a read_committed consumer vs load")
                .xAxisTitle("concurrent turns").yAxisTitle("latency (ms, log)").build();
        chart.getStyler().setYAxisLogarithmic(true);
        List<LadderStep> ladder = results.ladder();
        double[] turns = ladder.stream().mapToDouble(LadderStep::turns).toArray();
        series(chart, "emit p50", turns, ladder.stream().mapToDouble(s -> positive(s.emitLatency().p50())).toArray());
        series(chart, "emit p99", turns, ladder.stream().mapToDouble(s -> positive(s.emitLatency().p99())).toArray());
        series(chart, "content p99 (every delta)", turns,
                ladder.stream().mapToDouble(s -> positive(s.contentLatency().p99())).toArray());
        LatencyPairs pairs = results.latencyPairs();
        if (pairs != null && !pairs.passThrough().isEmpty()) {
            // every pair's p99 at the step, for both apps: the spread shows as a column of points
            double[] at = pairs.topology().stream().mapToDouble(LadderStep::turns).toArray();
            scatter(chart, "topology p99, each pair", at,
                    pairs.topology().stream().mapToDouble(s -> positive(s.emitLatency().p99())).toArray());
            scatter(chart, "pass-through p99, each pair", pairs.passThrough().stream().mapToDouble(LadderStep::turns).toArray(),
                    pairs.passThrough().stream().mapToDouble(s -> positive(s.emitLatency().p99())).toArray());
        }
        series(chart, "target " + results.settings().latencyTargetMs() + " ms", new double[] {turns[0], turns[turns.length - 1]},
                new double[] {results.settings().latencyTargetMs(), results.settings().latencyTargetMs()});
        return chart;
    }

    private static XYChart amplification(BenchResults results) {
        XYChart chart = new XYChartBuilder().width(800).height(500)
                .title("Upsert write amplification vs item length")
                .xAxisTitle("item length (tokens, log)").yAxisTitle("upsert bytes / content bytes").build();
        chart.getStyler().setXAxisLogarithmic(true);
        results.amplification().stream().map(Amplification::gradient).distinct().forEach(gradient -> {
            List<Amplification> rows = results.amplification().stream().filter(a -> a.gradient().equals(gradient)).toList();
            series(chart, gradient, rows.stream().mapToDouble(Amplification::tokens).toArray(),
                    rows.stream().mapToDouble(Amplification::upsertAmplification).toArray());
            series(chart, "changelog, " + gradient, rows.stream().mapToDouble(Amplification::tokens).toArray(),
                    rows.stream().mapToDouble(Amplification::changelogRatio).toArray());
        });
        return chart;
    }

    private static void series(XYChart chart, String name, double[] x, double[] y) {
        XYSeries series = chart.addSeries(name, x, y);
        series.setMarker(SeriesMarkers.CIRCLE);
    }

    /** "flood throughput vs pass-through": short enough for the axis. */
    private static String label(String figure) {
        return figure.replace(", topology / ", " vs ").replace("pass-through Streams", "pass-through");
    }

    private static void scatter(XYChart chart, String name, double[] x, double[] y) {
        XYSeries series = chart.addSeries(name, x, y);
        series.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Scatter);
    }

    /** A log axis cannot show zero. */
    private static double positive(double ms) {
        return Math.max(ms, 0.1);
    }
}
