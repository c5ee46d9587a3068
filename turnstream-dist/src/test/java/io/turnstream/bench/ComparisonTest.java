package io.turnstream.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.turnstream.bench.BenchResults.Figure;
import io.turnstream.bench.Comparison.Row;
import io.turnstream.bench.Comparison.Verdict;
import io.turnstream.model.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ComparisonTest {

    @Test
    void aMedianOutsideTheOtherRunsRangeBothWaysIsAChange() {
        Spread before = Spread.of(List.of(0.40, 0.42, 0.44, 0.41, 0.43));
        Spread after = Spread.of(List.of(0.60, 0.58, 0.62, 0.61, 0.59));

        List<Row> rows = Comparison.compare(List.of(ratio("flood", before)), List.of(ratio("flood", after)));

        assertThat(rows).singleElement().satisfies(row -> {
            assertThat(row.verdict()).isEqualTo(Verdict.CHANGE);
            assertThat(row.change()).isCloseTo(0.60 / 0.42 - 1, within(1e-9));
        });
    }

    @Test
    void aMedianInsideEitherRunsRangeIsNoise() {
        Spread wide = Spread.of(List.of(0.2, 0.5, 0.9, 0.4, 0.6));
        Spread narrowInsideWide = Spread.of(List.of(0.70, 0.72, 0.71, 0.69, 0.70));
        // the new median 0.70 lies inside the old range 0.2-0.9, though the old median lies outside the new range
        assertThat(Comparison.verdict(wide, narrowInsideWide)).isEqualTo(Verdict.NOISE);
        assertThat(Comparison.verdict(narrowInsideWide, wide)).isEqualTo(Verdict.NOISE);
        assertThat(Comparison.verdict(wide, wide)).isEqualTo(Verdict.NOISE);
    }

    @Test
    void aSingleRunOnEitherSideCannotBeJudgedAndNewFiguresSaySo() {
        Spread one = Spread.of(List.of(5.5));
        Spread many = Spread.of(List.of(1.0, 1.1, 1.2));

        List<Row> rows = Comparison.compare(List.of(ratio("amplification", one), ratio("gone", many)),
                List.of(ratio("amplification", Spread.of(List.of(9.0))), ratio("fresh", many)));

        assertThat(rows).extracting(Row::name, Row::verdict).containsExactly(
                org.assertj.core.groups.Tuple.tuple("amplification", Verdict.ONE_RUN),
                org.assertj.core.groups.Tuple.tuple("fresh", Verdict.NEW));
        assertThat(rows.get(1).base()).isNull();
    }

    @Test
    void theMarkdownNamesEveryFigureWithBothSpreadsAndTheVerdict() {
        List<Row> rows = Comparison.compare(
                List.of(ratio("flood ratio", Spread.of(List.of(0.4, 0.42, 0.44)))),
                List.of(ratio("flood ratio", Spread.of(List.of(0.6, 0.62, 0.64)))));

        String md = Comparison.markdown(Path.of("base/results.json"), rows);

        assertThat(md).contains("| flood ratio | 0.42x (0.40x-0.44x; IQR 0.41x-0.43x) | 0.62x (0.60x-0.64x; IQR 0.61x-0.63x) | +48% | **change** |",
                "1 of 1 figures changed beyond both runs' spread");
    }

    @Test
    void figuresRoundTripThroughResultsJson(@TempDir Path dir) throws IOException {
        Figure figure = new Figure("emit p99 at 200 turns, topology", "ms", Spread.of(List.of(180.0, 193.0, 179.0)));
        Path file = Files.write(dir.resolve("results.json"),
                Json.MAPPER.writeValueAsBytes(Map.of("machine", Map.of(), "figures", List.of(figure))));

        assertThat(Comparison.readFigures(file, Comparison.Source.BENCH)).containsExactly(figure);
    }

    @Test
    void aResultsJsonWithoutFiguresOrNotJsonIsAClearError(@TempDir Path dir) throws IOException {
        Path old = Files.writeString(dir.resolve("old.json"), "{\"ratios\": {\"floodThroughputVsPassThrough\": 0.82}}");
        Path garbage = Files.writeString(dir.resolve("garbage.json"), "flood 0.82");

        assertThatThrownBy(() -> Comparison.readFigures(old, Comparison.Source.BENCH)).isInstanceOf(IOException.class)
                .hasMessageContaining("has no \"figures\"");
        assertThatThrownBy(() -> Comparison.readFigures(garbage, Comparison.Source.BENCH)).isInstanceOf(IOException.class)
                .hasMessageContaining("is not JSON");
    }

    private static Figure ratio(String name, Spread spread) {
        return new Figure(name, Figures.RATIO, spread);
    }
}
