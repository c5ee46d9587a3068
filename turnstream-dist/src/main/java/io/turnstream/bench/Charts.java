package io.turnstream.bench;

import io.turnstream.bench.BenchResults.Amplification;
import io.turnstream.bench.BenchResults.LadderStep;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.markers.SeriesMarkers;

/** The two charts of a run as PNG: latency against load, and write amplification against item length. */
final class Charts {

    static final String LATENCY_PNG = "latency-vs-load.png";
    static final String AMPLIFICATION_PNG = "amplification-vs-length.png";

    private Charts() {
    }

    static void write(BenchResults results, Path dir) throws IOException {
        System.setProperty("java.awt.headless", "true");
        BitmapEncoder.saveBitmap(latency(results), dir.resolve(LATENCY_PNG).toString(), BitmapEncoder.BitmapFormat.PNG);
        BitmapEncoder.saveBitmap(amplification(results), dir.resolve(AMPLIFICATION_PNG).toString(),
                BitmapEncoder.BitmapFormat.PNG);
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
        LadderStep copy = results.passThroughLatency();
        series(chart, "pass-through p99", new double[] {copy.turns()}, new double[] {positive(copy.emitLatency().p99())});
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

    /** A log axis cannot show zero. */
    private static double positive(double ms) {
        return Math.max(ms, 0.1);
    }
}
