package io.turnstream.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.cluster.TopicFollower.Takeover;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** How a fault's takeover on two topics with the same keys (upserts, appends) combines per turn. */
class TakeoverTest {

    @Test
    void eachTurnCountsWhicheverTopicItWasWrittenToAgainFirst() {
        Takeover upserts = new Takeover(Map.of("turn-1", seconds(9), "turn-2", seconds(2)), Set.of("turn-3"));
        Takeover appends = new Takeover(Map.of("turn-1", seconds(4), "turn-4", seconds(6)), Set.of());

        Takeover output = upserts.earliest(appends);

        assertThat(output.streamedAgain()).isEqualTo(Map.of("turn-1", seconds(4), "turn-2", seconds(2),
                "turn-4", seconds(6)));
        assertThat(output.endedBefore()).containsExactly("turn-3");
        assertThat(output.longest()).isEqualTo(seconds(6));
        assertThat(output.median()).isEqualTo(seconds(4));
        assertThat(output.unresolved(List.of("turn-1", "turn-3", "turn-5"))).containsExactly("turn-5");
    }

    private static Duration seconds(long seconds) {
        return Duration.ofSeconds(seconds);
    }
}
