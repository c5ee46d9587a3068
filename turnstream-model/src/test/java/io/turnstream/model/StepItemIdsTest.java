package io.turnstream.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.turnstream.model.StepItemIds.Kind;
import io.turnstream.model.StepItemIds.Parsed;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The step items' ids are the contract's forms, and each reads back as the parts it was built of. */
class StepItemIdsTest {

    @Test
    void everyFormIsSpelledAsTheContractSaysAndReadsBack() {
        String prefix = StepItemIds.stepPrefix("run-1", 2);
        String item = StepItemIds.item(prefix, 3);
        String output = StepItemIds.output("run-1", 2, 0);
        String abandoned = StepItemIds.abandonedOutput(item);
        String compaction = StepItemIds.compaction("run-1", 2, 1_764_331_200_000L);

        assertThat(prefix).isEqualTo("run-1-s2");
        assertThat(item).isEqualTo("run-1-s2-3");
        assertThat(output).isEqualTo("run-1-s2-out0");
        assertThat(abandoned).isEqualTo("run-1-s2-3-out");
        assertThat(compaction).isEqualTo("run-1-s2-compaction-1764331200000");
        assertThat(StepItemIds.summaryPrefix("run-1", 2)).isEqualTo("run-1-s2-summary");

        assertThat(StepItemIds.parse(item)).contains(new Parsed("run-1", 2, Kind.ITEM, 3));
        assertThat(StepItemIds.parse(output)).contains(new Parsed("run-1", 2, Kind.OUTPUT, 0));
        assertThat(StepItemIds.parse(abandoned)).contains(new Parsed("run-1", 2, Kind.ABANDONED_OUTPUT, 3));
        assertThat(StepItemIds.parse(compaction))
                .contains(new Parsed("run-1", 2, Kind.COMPACTION, 1_764_331_200_000L));
        assertThat(StepItemIds.parse(item).map(Parsed::stepPrefix)).contains(prefix);
    }

    @ParameterizedTest
    @ValueSource(strings = {"run-1", "r", "run-s1-2", "run-s1-out0", "x-s3-compaction-5", "12345", "a-s", "a-s-", "-s1",
            "0f9c-s12-s7", "run-s1-0-out", "-", "line\nbreak-s2"})
    void aRunIdOfAnyShapeComesBackWhole(String runId) {
        for (int step : new int[] {1, 9, 10, Integer.MAX_VALUE}) {
            String prefix = StepItemIds.stepPrefix(runId, step);
            String item = StepItemIds.item(prefix, 10);

            assertThat(StepItemIds.parse(item)).contains(new Parsed(runId, step, Kind.ITEM, 10));
            assertThat(StepItemIds.parse(StepItemIds.output(runId, step, 7)))
                    .contains(new Parsed(runId, step, Kind.OUTPUT, 7));
            assertThat(StepItemIds.parse(StepItemIds.abandonedOutput(item)))
                    .contains(new Parsed(runId, step, Kind.ABANDONED_OUTPUT, 10));
            assertThat(StepItemIds.parse(StepItemIds.compaction(runId, step, Long.MAX_VALUE)))
                    .contains(new Parsed(runId, step, Kind.COMPACTION, Long.MAX_VALUE));
            assertThat(StepItemIds.parse(item).map(Parsed::stepPrefix)).contains(prefix);
        }
    }

    @ParameterizedTest
    @NullSource
    @ValueSource(strings = {"", "run-1", "run-1-user-prompt", "item-a", "rs_0183", "run-s1", "run-s1-", "-s1-0",
            "run-s0-1", "run-s-1", "run-s1-x", "run-s1-out", "run-s1-outx", "run-s1--1", "run-s1-+1", "run-s01-1",
            "run-s1-01", "run-s1-out01", "run-s1-1-outs", "run-s1-1-out-", "run-s1-1 ", "run-S1-1", "run-s1-summary",
            "run-s1-summary-0", "run-s1-compaction", "run-s1-compaction-", "run-s1-compaction-x", "run-s2147483648-0",
            "run-s1-2147483648", "run-s1-out2147483648", "run-s1-compaction-9223372036854775808"})
    void anythingElseIsNoStepItem(String itemId) {
        assertThat(StepItemIds.parse(itemId)).isEqualTo(Optional.empty());
    }

    @Test
    void partsNoIdCanBeMadeOfAreRefused() {
        assertThatThrownBy(() -> StepItemIds.stepPrefix("", 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("run id");
        assertThatThrownBy(() -> StepItemIds.stepPrefix(null, 1)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> StepItemIds.output("run", 0, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("from 1");
        assertThatThrownBy(() -> StepItemIds.item("run-s1", -1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("from 0");
        assertThatThrownBy(() -> StepItemIds.output("run", 1, -1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> StepItemIds.compaction("run", 1, -1)).isInstanceOf(IllegalArgumentException.class);
    }
}
