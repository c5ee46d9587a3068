package io.turnstream.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.turnstream.bench.BenchResults.Figure;
import io.turnstream.bench.BenchResults.Target;
import java.util.List;
import org.junit.jupiter.api.Test;

class BenchTargetsTest {

    @Test
    void latencyTargetsAreIssue23sFixedFiguresWhateverTheCommitInterval() {
        List<Figure> figures = List.of(
                figure(Figures.emitP99(200), 140, 130, 160),
                figure(Figures.appendP99(200), 240, 230, 260),
                figure(Figures.appendP99(1000), 510, 480, 530));

        List<Target> targets = Bench.targets(BenchConfig.full(), figures);

        assertThat(targets).extracting(Target::name, Target::target, Target::met).containsExactly(
                tuple(Figures.emitP99(200), "<= 150 ms", true),
                tuple(Figures.appendP99(200), "<= 250 ms", true),
                tuple(Figures.appendP99(1000), "<= 500 ms", false));
        assertThat(targets).extracting(Target::clear).containsExactly(false, false, false);
    }

    private static Figure figure(String name, double median, double min, double max) {
        return new Figure(name, "ms", Spread.of(List.of(min, median, max)));
    }
}
