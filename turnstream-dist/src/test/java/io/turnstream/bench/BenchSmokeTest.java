package io.turnstream.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.model.Json;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The harness end to end in a tiny configuration (one ladder step, two pairs per comparison, two
 * amplification runs): every figure lands in the results with its spread; no timing is judged.
 */
class BenchSmokeTest {

    // The drain limit only bounds the wait for a slow (shared, loaded) machine; a fast one drains at once.
    private static final BenchConfig TINY = new BenchConfig(List.of(3), Duration.ofSeconds(1), Duration.ofSeconds(2),
            Duration.ofSeconds(60), 200, 4, new BenchConfig.Range(10, 20), new BenchConfig.Range(20, 60), 2_000,
            List.of(100), 0.25, 3, 250, 2, 7, 2, 2, 2, 1, EnumSet.allOf(BenchConfig.Phase.class),
            // the real machine's counters, a rule nearly any machine meets at once, and a 1 s cap where it does not
            new BenchConfig.Settling(Duration.ofMillis(500), 0.01, Duration.ofSeconds(1), Duration.ofSeconds(10)));

    @Test
    void aTinyRunWritesEveryFigure(@TempDir Path out) throws Exception {
        StringWriter progress = new StringWriter();

        new Bench(TINY, new Properties(), new PrintWriter(progress)).run(out);

        JsonNode results = Json.MAPPER.readTree(Files.readAllBytes(out.resolve(Bench.RESULTS_JSON)));
        JsonNode step = results.path("ladder").get(0);
        assertThat(results.path("ladder")).hasSize(1);
        assertThat(step.path("turns").asInt()).isEqualTo(3);
        assertThat(step.path("topology")).hasSize(2).allSatisfy(run -> {
            assertThat(run.path("sentEventsPerSec").asDouble()).isPositive();
            assertThat(run.path("upsertsPerSec").asDouble()).isPositive();
            assertEveryPercentile(run.path("emitLatency"));
            assertEveryPercentile(run.path("contentLatency"));
            assertEveryPercentile(run.path("appendLatency"));
            assertThat(run.path("appendBytesPerContentByte").asDouble()).isGreaterThan(1);
            assertThat(run.path("appCpuMsPer1000Events").asDouble()).isPositive();
        });
        assertThat(step.path("passThrough")).hasSize(2).allSatisfy(run -> assertEveryPercentile(run.path("emitLatency")));
        // every ladder run says what its producer sent again and what the JVM spent collecting garbage (usually 0)
        assertThat(step.path("topology")).allSatisfy(run -> {
            assertThat(run.path("producerRetries").isIntegralNumber()).as(run.toString()).isTrue();
            assertThat(run.path("gcMs").isIntegralNumber()).isTrue();
        });
        assertThat(step.path("passThrough")).allSatisfy(run -> assertThat(run.path("producerRetries").isIntegralNumber()).isTrue());
        // pairs alternate, warm-up left out
        assertThat(results.path("flood")).extracting(f -> f.path("pair").asInt() + " " + f.path("app").asText())
                .containsExactly("1 " + FloodRun.TOPOLOGY, "1 " + FloodRun.PASS_THROUGH, "1 " + FloodRun.CONSUMER,
                        "2 " + FloodRun.TOPOLOGY, "2 " + FloodRun.PASS_THROUGH, "2 " + FloodRun.CONSUMER);
        assertThat(results.path("flood")).allSatisfy(f -> {
            assertThat(f.path("eventsPerSec").asDouble()).isPositive();
            assertThat(f.path("appCpuMsPer1000Events").asDouble()).isPositive();
            // the Streams apps' producers' retries are counted (usually none); the plain consumer has no producer
            assertThat(f.path("producerRetries").isIntegralNumber())
                    .isEqualTo(!f.path("app").asText().equals(FloodRun.CONSUMER));
        });
        assertThat(results.path("amplification")).extracting(a -> a.path("run").asInt() + " " + a.path("gradient").asText())
                .containsExactly("1 seed", "1 growth-0.25", "2 seed", "2 growth-0.25");
        assertThat(results.path("amplification")).allSatisfy(a -> {
            assertThat(a.path("upsertAmplification").asDouble()).isGreaterThanOrEqualTo(1);
            assertThat(a.path("changelogRatio").asDouble()).isPositive();
            assertThat(a.path("changelogDiskRatio").asDouble()).isPositive();
        });
        assertThat(results.path("memory")).hasSize(2).allSatisfy(memory -> {
            assertThat(memory.path("openTurns").asInt()).isPositive();
            assertThat(memory.path("heapOpenBytes").asLong()).isPositive();
            assertThat(memory.path("rocksDbBytes").asLong()).isPositive();
        });
        List<BenchResults.Figure> figures = Comparison.readFigures(out.resolve(Bench.RESULTS_JSON), Comparison.Source.BENCH);
        for (String repeated : List.of(Figures.FLOOD_VS_PASS_THROUGH, Figures.FLOOD_CPU_VS_PASS_THROUGH,
                "emit p99 at 3 turns, topology / pass-through", "CPU per event at 3 turns, topology / pass-through",
                Figures.upsertAmplification(100, "seed"), Figures.CHANGELOG_RECORDS, "heap per open turn at 3 turns",
                Figures.ISOLATION_TURN_START, Figures.ISOLATION_DELIVERY)) {
            assertThat(Figures.find(figures, repeated)).as(repeated).get()
                    .satisfies(f -> assertThat(f.spread().runs()).isEqualTo(2));
        }
        assertThat(results.path("loadBefore").path("one").isNumber()).isTrue();
        assertThat(results.path("loadAfter").path("one").isNumber()).isTrue();
        assertThat(results.path("warnings").isArray()).isTrue();
        // one wait before every measured run, each with the CPUs it saw: ladder 2 x 2, flood 2 x 3, amplification
        // 2 x 2, isolation 2 x 2
        assertThat(results.path("settling")).hasSize(18).allSatisfy(wait -> {
            assertThat(wait.path("idlePercent").isNumber()).as(wait.toString()).isTrue();
            assertThat(wait.path("load").path("one").isNumber()).isTrue();
        });
        assertThat(results.path("settling")).extracting(w -> w.path("run").asText()).contains(
                "ladder 3 turns, topology 1", "ladder 3 turns, pass-through 2", "flood pair 2, " + FloodRun.CONSUMER,
                "amplification run 1, seed", "isolation pair 2, loaded");
        assertThat(results.path("targets")).isNotEmpty();
        // the topology's commits follow its input by default: both intervals are recorded, not the fresh one alone
        JsonNode settings = results.path("settings");
        assertThat(settings.path("commitIntervalMs").asLong()).isEqualTo(75);
        assertThat(settings.path("commitBehindIntervalMs").asLong()).isEqualTo(500);
        assertThat(settings.path("commitBehindAfterMs").asLong()).isEqualTo(1_000);
        assertThat(Files.readString(out.resolve(Bench.RESULTS_MD)))
                .contains("commit interval 75 ms (500 ms while the input is more than 1,000 ms old)");
        assertThat(Files.readString(out.resolve(Bench.RESULTS_MD))).contains("### Figures: median and spread", "### Flood",
                "### Load ladder, pair by pair", "### Write amplification", "### Memory", "### Live text",
                "Load average", "### Before each measured run: waiting for the machine to settle");
        assertThat(out.resolve(Charts.SPREAD_PNG)).isNotEmptyFile();
        assertThat(out.resolve(Charts.LATENCY_PNG)).isNotEmptyFile();
        assertThat(out.resolve(Charts.AMPLIFICATION_PNG)).isNotEmptyFile();
        assertThat(progress.toString()).contains("ladder", "flood", "amplification", "isolation pair 2/2", "done");
    }

    private static void assertEveryPercentile(JsonNode latency) {
        assertThat(latency.path("count").asLong()).isPositive();
        for (String field : List.of("p50", "p95", "p99", "max")) {
            assertThat(latency.path(field).isNumber()).as(field).isTrue();
        }
    }
}
