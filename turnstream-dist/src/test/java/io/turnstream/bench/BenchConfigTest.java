package io.turnstream.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.turnstream.bench.BenchConfig.Phase;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class BenchConfigTest {

    @Test
    void everyStepRunsFivePairsByDefaultAndTheLargestCanRunFewer() {
        BenchConfig full = BenchConfig.full();

        assertThat(full.steps()).containsExactly(50, 200, 1000);
        assertThat(full.steps()).extracting(full::pairsAt).containsExactly(5, 5, 5);
        assertThat(with(full, full.ladder(), 5, 3, EnumSet.allOf(Phase.class)).steps())
                .extracting(with(full, full.ladder(), 5, 3, EnumSet.allOf(Phase.class))::pairsAt).containsExactly(5, 5, 3);
        assertThat(with(full, List.of(200), 5, 3, EnumSet.allOf(Phase.class)).pairsAt(200)).isEqualTo(5);
        // fewer pairs asked for than the largest step's default: the largest runs no more than the others
        assertThat(with(full, full.ladder(), 2, 3, EnumSet.allOf(Phase.class)).pairsAt(1000)).isEqualTo(2);
    }

    @Test
    void appendsAloneRunTheTargetStepAndATargetOutsideTheLadderIsAdded() {
        BenchConfig full = BenchConfig.full();

        assertThat(with(full, full.ladder(), 5, 3, EnumSet.of(Phase.APPENDS)).steps()).containsExactly(200);
        assertThat(with(full, List.of(50, 1000), 5, 3, EnumSet.of(Phase.LADDER)).steps()).containsExactly(50, 200, 1000);
        assertThat(with(full, full.ladder(), 5, 3, EnumSet.of(Phase.FLOOD)).steps()).isEmpty();
        assertThatThrownBy(() -> with(full, full.ladder(), 5, 0, EnumSet.of(Phase.LADDER)))
                .hasMessageContaining("pairs must be at least 1, got 0");
    }

    @Test
    void aFullRunWaitsAtMostTwoMinutesForTheMachineBeforeARunAndTenInAllAQuickOneFarLess() {
        BenchConfig.Settling full = BenchConfig.full().settle();
        BenchConfig.Settling quick = BenchConfig.quick().settle();

        assertThat(List.of(full, quick)).allSatisfy(rule -> {
            assertThat(rule.window()).isEqualTo(Duration.ofSeconds(2));
            assertThat(rule.minIdle()).isEqualTo(0.8);
            assertThat(rule.enabled()).isTrue();
        });
        assertThat(full.maxWait()).isEqualTo(Duration.ofMinutes(2));
        assertThat(full.budget()).isEqualTo(Duration.ofMinutes(10));
        assertThat(quick.maxWait()).isEqualTo(Duration.ofSeconds(20));
        assertThat(quick.budget()).isEqualTo(Duration.ofMinutes(1));
        assertThat(BenchConfig.Settling.OFF.enabled()).isFalse();
    }

    private static BenchConfig with(BenchConfig d, List<Integer> ladder, int pairs, int largestStepPairs, Set<Phase> phases) {
        return new BenchConfig(ladder, d.warmup(), d.measure(), d.drainLimit(), d.tokensPerSecond(), d.tokensPerDelta(),
                d.reasoningTokens(), d.messageTokens(), d.floodEvents(), d.itemLengths(), d.growthFraction(), d.targetStep(),
                d.latencyTargetMs(), d.partitions(), d.seed(), pairs, largestStepPairs, d.amplificationRuns(), d.floodWarmupPairs(),
                phases, d.settle());
    }
}
