package io.turnstream.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.model.Json;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The harness end to end in a tiny configuration: every figure lands in the results; no timing is judged. */
class BenchSmokeTest {

    // The drain limit only bounds the wait for a slow (shared, loaded) machine; a fast one drains at once.
    private static final BenchConfig TINY = new BenchConfig(List.of(3, 6), Duration.ofSeconds(1), Duration.ofSeconds(2),
            Duration.ofSeconds(60), 200, 4, new BenchConfig.Range(10, 20), new BenchConfig.Range(20, 60), 2_000,
            List.of(100, 1_000), 0.25, 3, 250, 2, 7);

    @Test
    void aTinyRunWritesEveryFigure(@TempDir Path out) throws Exception {
        StringWriter progress = new StringWriter();

        new Bench(TINY, new Properties(), new PrintWriter(progress)).run(out);

        JsonNode results = Json.MAPPER.readTree(Files.readAllBytes(out.resolve(Bench.RESULTS_JSON)));
        assertThat(results.path("ladder")).hasSize(2).allSatisfy(step -> {
            assertThat(step.path("sentEventsPerSec").asDouble()).isPositive();
            assertThat(step.path("upsertsPerSec").asDouble()).isPositive();
            assertEveryPercentile(step.path("emitLatency"));
            assertEveryPercentile(step.path("contentLatency"));
            assertEveryPercentile(step.path("appendLatency"));
            assertThat(step.path("appendBytesPerContentByte").asDouble()).isGreaterThan(1);
            assertThat(step.path("appCpuMsPer1000Events").asDouble()).isPositive();
        });
        assertEveryPercentile(results.path("passThroughLatency").path("emitLatency"));
        assertThat(results.path("flood")).extracting(f -> f.path("app").asText())
                .containsExactly(FloodRun.CONSUMER, FloodRun.PASS_THROUGH, FloodRun.TOPOLOGY);
        assertThat(results.path("flood")).allSatisfy(f -> {
            assertThat(f.path("eventsPerSec").asDouble()).isPositive();
            assertThat(f.path("appCpuMsPer1000Events").asDouble()).isPositive();
        });
        assertThat(results.path("amplification")).hasSize(4).allSatisfy(a -> {
            assertThat(a.path("upsertAmplification").asDouble()).isGreaterThanOrEqualTo(1);
            assertThat(a.path("changelogRatio").asDouble()).isPositive();
            assertThat(a.path("changelogDiskRatio").asDouble()).isPositive();
        });
        JsonNode memory = results.path("memory");
        assertThat(memory.path("openTurns").asInt()).isPositive();
        assertThat(memory.path("heapOpenBytes").asLong()).isPositive();
        assertThat(memory.path("rocksDbBytes").asLong()).isPositive();
        assertThat(results.path("ratios").path("floodThroughputVsPassThrough").isNumber()).isTrue();
        assertThat(results.path("ratios").path("emitP99VsPassThroughP99").isNumber()).isTrue();
        assertThat(results.path("targets")).isNotEmpty();
        assertThat(Files.readString(out.resolve(Bench.RESULTS_MD))).contains("### Ratios", "### Flood", "### Load ladder",
                "### Write amplification", "### Memory", "### Live text");
        assertThat(out.resolve(Charts.LATENCY_PNG)).isNotEmptyFile();
        assertThat(out.resolve(Charts.AMPLIFICATION_PNG)).isNotEmptyFile();
        assertThat(progress.toString()).contains("ladder", "flood", "amplification", "done");
    }

    private static void assertEveryPercentile(JsonNode latency) {
        assertThat(latency.path("count").asLong()).isPositive();
        for (String field : List.of("p50", "p95", "p99", "max")) {
            assertThat(latency.path(field).isNumber()).as(field).isTrue();
        }
    }
}
