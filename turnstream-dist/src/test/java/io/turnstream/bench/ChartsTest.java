package io.turnstream.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ChartsTest {

    @Test
    void aRatioIsLabelledNarrowerThanItsBox() {
        assertThat(Charts.label(Figures.FLOOD_VS_PASS_THROUGH)).isEqualTo("flood / pass-through");
        assertThat(Charts.label(Figures.FLOOD_CPU_VS_PASS_THROUGH)).isEqualTo("flood CPU/event / pass-through");
        assertThat(Charts.label("emit p99 at 1000 turns, topology / pass-through")).isEqualTo("emit p99 @1000 / pass-through");
        assertThat(Charts.label("CPU per event at 200 turns, topology / pass-through")).isEqualTo("CPU/event @200 / pass-through");
    }
}
