package io.turnstream.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.cluster.ClusterFaultRun;
import io.turnstream.cluster.TopicFollower.Sighting;
import io.turnstream.model.Json;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** What {@code bench --cluster} makes of a fault run: the waits a UI saw, per second, and its results files. */
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

    @Test
    void theResultsAreWrittenAsJsonAndMarkdown() throws Exception {
        ClusterFaultRun.Fault fault = new ClusterFaultRun.Fault("gateway", "2026-11-27T01:36:28.155Z", 70.4, 26, 26,
                10.6, 1.2, "turn-7", 4.1, 0.9, 3.3, 0.4, 6,
                new TreeMap<>(Map.of(0, 0.2, 1, 0.3, 2, 0.4, 3, 3.3, 4, 0.4, 5, 0.3)), 10.2, 26, 26);
        BenchResults.LoadAverage load = new BenchResults.LoadAverage(1.0, 2.0, 3.0);
        ClusterBench.Results results = new ClusterBench.Results(2, load, load, ClusterBench.Settings.quick(3),
                List.of(), 1.5, List.of(fault), 60, 233, 60, List.of(new ClusterBench.Second(70, 3, 900, 1000)), 400);

        JsonNode json = Json.MAPPER.readTree(Json.MAPPER.writeValueAsString(results));

        assertThat(json.at("/faults/0/killedAt").asText()).isEqualTo("2026-11-27T01:36:28.155Z");
        assertThat(json.at("/timeline/0/maxWaitMs").asDouble()).isEqualTo(1000);
        assertThat(json.at("/faults/0/partitionsAgain/3").asDouble()).isEqualTo(3.3);
        assertThat(ClusterBench.markdown(results))
                .contains("| gateway | 70 s | 26 | 10.6 s (1.2 s) | 4.1 s (0.9 s) | 3.3 s (0.4 s; 6 partitions) "
                        + "| 10.2 s (26 of 26 runs) |")
                .contains("- gateway: 0: 0.2 s, 1: 0.3 s, 2: 0.4 s, 3: 3.3 s, 4: 0.4 s, 5: 0.3 s");
    }

    @Test
    void aTurnCountChangesOnlyTheFaultRunsTurns() {
        assertThat(ClusterBench.Settings.full(3).withTurns(50))
                .isEqualTo(new ClusterBench.Settings(3, 3, 100_000, 50, 5));
    }

    private static Sighting read(double seconds) {
        return new Sighting(0, START + (long) (seconds * 1e9));
    }

    private static ClusterFaultRun.Report report(Map<String, List<Sighting>> sightings) {
        return new ClusterFaultRun.Report(List.copyOf(sightings.keySet()), Map.of(), List.of(), 0, 0, START, List.of(),
                List.of(), List.of(), List.of(), sightings);
    }
}
