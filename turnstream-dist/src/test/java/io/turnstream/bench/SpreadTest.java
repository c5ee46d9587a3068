package io.turnstream.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.Test;

class SpreadTest {

    @Test
    void medianRangeAndQuartilesOfAnOddNumberOfRunsKeepTheRunOrder() {
        Spread s = Spread.of(List.of(5.0, 1.0, 4.0, 2.0, 3.0));

        assertThat(s.values()).containsExactly(5.0, 1.0, 4.0, 2.0, 3.0);
        assertThat(s.median()).isEqualTo(3.0);
        assertThat(s.min()).isEqualTo(1.0);
        assertThat(s.max()).isEqualTo(5.0);
        assertThat(s.q1()).isEqualTo(2.0);
        assertThat(s.q3()).isEqualTo(4.0);
        assertThat(s.runs()).isEqualTo(5);
    }

    @Test
    void anEvenNumberOfRunsInterpolatesBetweenNeighbours() {
        Spread s = Spread.of(List.of(10.0, 40.0, 20.0, 30.0));

        assertThat(s.median()).isEqualTo(25.0);
        assertThat(s.q1()).isEqualTo(17.5);
        assertThat(s.q3()).isEqualTo(32.5);
    }

    @Test
    void oneRunIsItsOwnMedianAndRange() {
        Spread s = Spread.of(List.of(7.0));

        assertThat(List.of(s.median(), s.min(), s.max(), s.q1(), s.q3())).containsOnly(7.0);
        assertThat(s.below()).isZero();
        assertThat(s.above()).isZero();
    }

    @Test
    void theRangeIsJudgedAgainstTwentyPercentOfTheMedianOnEachSide() {
        Spread inside = Spread.of(List.of(0.85, 1.0, 1.15));
        Spread lowOutlier = Spread.of(List.of(0.75, 1.0, 1.05));
        Spread highOutlier = Spread.of(List.of(0.95, 1.0, 1.25));

        assertThat(inside.below()).isCloseTo(0.15, within(1e-9));
        assertThat(inside.widerThan(Spread.NOISE_LIMIT)).isFalse();
        assertThat(lowOutlier.widerThan(Spread.NOISE_LIMIT)).isTrue();
        assertThat(highOutlier.widerThan(Spread.NOISE_LIMIT)).isTrue();
    }

    @Test
    void ratiosArePerPairNotOfTheMedians() {
        // topology 10, 30, 20 and baseline 20, 30, 80: per pair 0.5, 1.0, 0.25; the medians' ratio would be 20/30
        List<Double> ratios = Spread.ratios(List.of(10.0, 30.0, 20.0), List.of(20.0, 30.0, 80.0));

        assertThat(ratios).containsExactly(0.5, 1.0, 0.25);
        assertThat(Spread.of(ratios).median()).isEqualTo(0.5);
    }

    @Test
    void unevenPairsAndMissingValuesAreRefused() {
        assertThatThrownBy(() -> Spread.ratios(List.of(1.0, 2.0), List.of(1.0)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("2 and 1");
        assertThatThrownBy(() -> Spread.of(List.of())).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Spread.of(List.of(1.0, Double.NaN))).isInstanceOf(IllegalArgumentException.class);
    }
}
