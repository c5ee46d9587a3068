package io.turnstream.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.cluster.ClusterFaultRun;
import io.turnstream.cluster.TopicFollower.Sighting;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What {@code bench --cluster} makes of a fault run's sightings: the waits a UI saw, per second. */
class ClusterBenchTest {

    private static final long START = 5_000_000_000L;

    @Test
    void eachUpsertCountsInTheSecondItWasReadWithHowLongItsTurnWaitedForIt() {
        ClusterFaultRun.Report report = report(Map.of(
                // streams every 200 ms, then waits 8 s through a fault and streams again at 10.1 s
                "turn-1", List.of(read(1.0), read(1.2), read(1.4), read(2.1), read(10.1)),
                "turn-2", List.of(read(1.5), read(10.5))));

        assertThat(ClusterBench.timeline(report)).containsExactly(
                new ClusterBench.Second(1, 2, 200.0, 200.0),
                new ClusterBench.Second(2, 1, 700.0, 700.0),
                new ClusterBench.Second(10, 2, 8990.0, 9000.0));
    }

    @Test
    void aTurnWithOneUpsertHasNoWait() {
        assertThat(ClusterBench.timeline(report(Map.of("turn-1", List.of(read(3.0)))))).isEmpty();
    }

    private static Sighting read(double seconds) {
        return new Sighting(0, START + (long) (seconds * 1e9));
    }

    private static ClusterFaultRun.Report report(Map<String, List<Sighting>> sightings) {
        return new ClusterFaultRun.Report(List.copyOf(sightings.keySet()), Map.of(), List.of(), 0, 0, START, List.of(),
                List.of(), List.of(), List.of(), sightings);
    }
}
