package io.turnstream.bench;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.bench.BenchResults.Figure;
import io.turnstream.model.Json;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * One run's figures against an earlier run's: per figure the change of the median, and whether it is
 * a change (each median outside the other run's range) or noise (either median inside the other's
 * range). A figure measured once on either side has no spread to judge by.
 */
public final class Comparison {

    public static final String COMPARISON_MD = "comparison.md";

    /** What a difference between two medians means. */
    public enum Verdict {
        CHANGE("**change**"), NOISE("noise"), ONE_RUN("one run: no spread to judge by"), NEW("not in the base run");

        private final String text;

        Verdict(String text) {
            this.text = text;
        }

        public String text() {
            return text;
        }
    }

    /** One figure of the current run against the base run; {@code base} and {@code change} null when it is new. */
    public record Row(String name, String unit, Spread base, Spread current, Double change, Verdict verdict) {
    }

    private Comparison() {
    }

    /** Every figure of {@code current}, in its order, against the figure of the same name in {@code base}. */
    public static List<Row> compare(List<Figure> base, List<Figure> current) {
        Map<String, Figure> byName = base.stream().collect(Collectors.toMap(Figure::name, Function.identity(), (a, b) -> a));
        List<Row> rows = new ArrayList<>();
        for (Figure now : current) {
            Figure before = byName.get(now.name());
            if (before == null) {
                rows.add(new Row(now.name(), now.unit(), null, now.spread(), null, Verdict.NEW));
                continue;
            }
            Spread b = before.spread();
            Spread c = now.spread();
            Double change = b.median() == 0 ? null : c.median() / b.median() - 1;
            rows.add(new Row(now.name(), now.unit(), b, c, change, verdict(b, c)));
        }
        return rows;
    }

    static Verdict verdict(Spread base, Spread current) {
        if (base.runs() < 2 || current.runs() < 2) {
            return Verdict.ONE_RUN;
        }
        return !base.contains(current.median()) && !current.contains(base.median()) ? Verdict.CHANGE : Verdict.NOISE;
    }

    /**
     * Which bench wrote a results file: each has its own figures, so a base of the other kind can only be
     * an error. Told apart by a field only that kind's file has.
     */
    public enum Source {
        BENCH("results.json", "turnstream bench", "ladder"),
        CLUSTER("cluster-results.json", "turnstream bench --cluster", "throughput");

        private final String file;
        private final String command;
        private final String field;

        Source(String file, String command, String field) {
            this.file = file;
            this.command = command;
            this.field = field;
        }
    }

    /**
     * The figures of a {@code results.json} (or a {@code cluster-results.json}: {@code source}); a clear
     * error for a file that is not one, is the other bench's, or predates the figures.
     */
    public static List<Figure> readFigures(Path resultsJson, Source source) throws IOException {
        JsonNode results;
        try {
            results = Json.MAPPER.readTree(Files.readAllBytes(resultsJson));
        } catch (com.fasterxml.jackson.core.JacksonException e) {
            throw new IOException(resultsJson + " is not JSON: " + e.getOriginalMessage(), e);
        }
        for (Source other : Source.values()) {
            if (other != source && results != null && results.has(other.field) && !results.has(source.field)) {
                throw new IOException(resultsJson + " is a " + other.file + " of " + other.command + ", which has other "
                        + "figures: compare " + source.command + " with an earlier " + source.file);
            }
        }
        JsonNode figures = results == null ? null : results.get("figures");
        if (figures == null || !figures.isArray()) {
            throw new IOException(resultsJson + " has no \"figures\": not a " + source.file + " of " + source.command
                    + ", or one written before figures had a spread (rerun the bench on the base commit)");
        }
        return Json.MAPPER.convertValue(figures, new TypeReference<List<Figure>>() { });
    }

    /** Prints the comparison of {@code current} with {@code base} and writes it to {@code file}. */
    public static void write(Path basePath, List<Figure> base, List<Figure> current, Path file, PrintWriter out)
            throws IOException {
        String md = markdown(basePath, compare(base, current));
        Files.writeString(file, md);
        out.print(md);
        out.flush();
    }

    static String markdown(Path basePath, List<Row> rows) {
        StringBuilder md = new StringBuilder();
        md.append("Against ").append(basePath).append(": a change when each median lies outside the other run's ")
                .append("range (min-max), noise otherwise.\n\n");
        List<List<String>> table = new ArrayList<>();
        for (Row r : rows) {
            table.add(List.of(r.name(), r.base() == null ? "" : Figures.formatWithQuartiles(r.base(), r.unit()),
                    Figures.formatWithQuartiles(r.current(), r.unit()),
                    r.change() == null ? "" : String.format(Locale.ROOT, "%+.0f%%", r.change() * 100), r.verdict().text()));
        }
        md.append(ResultsReport.table(List.of("figure", "base: median (range; IQR)", "now: median (range; IQR)",
                "change of the median", "verdict"), table));
        long changes = rows.stream().filter(r -> r.verdict() == Verdict.CHANGE).count();
        md.append(String.format(Locale.ROOT, "%n%d of %d figures changed beyond both runs' spread.%n", changes,
                rows.stream().filter(r -> r.verdict() == Verdict.CHANGE || r.verdict() == Verdict.NOISE).count()));
        return md.toString();
    }
}
