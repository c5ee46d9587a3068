package io.turnstream.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.testsupport.UsesBroker;
import io.turnstream.topology.TopologyConfig;
import io.turnstream.topology.UpsertTopology;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The topology's {@code /metrics/prometheus}, scraped from its health port while it works on a real broker. */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
@UsesBroker
class PrometheusMetricsTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    static Path dir;

    private static TestCluster cluster;
    private static ServiceMetrics metrics;
    private static StreamsService topology;

    @BeforeAll
    static void startBrokerAndTopology() throws Exception {
        cluster = TestCluster.start(dir.resolve("broker"), 1, Map.of());
        // the dead-letter sensor is made when the task starts: a short refresh finds it quickly
        Settings settings = Settings.of(TopologyInstance.settings(cluster.bootstrapServers(), "prometheus-metrics",
                dir.resolve("state"), Map.of(ServiceMetrics.KAFKA_REFRESH_MS, "200")));
        metrics = ServiceMetrics.create("topology", settings);
        TopologyConfig config = TopologyConfig.from(settings);
        topology = StreamsService.start(UpsertTopology.build(config), config.streamsProperties(),
                StreamsService.Options.from(settings, 0), metrics);
        TopologyInstance.awaitRunning(topology);
    }

    @AfterAll
    static void stopAll() {
        topology.close();
        metrics.close();
        cluster.close();
    }

    @Test
    void recordsProcessedAndDeadLettersMoveOnTheScrape() {
        PrometheusScrape before = scrape();
        assertThat(before.contentType()).startsWith("text/plain");
        assertThat(before.has("jvm_memory_used_bytes")).isTrue();
        assertThat(before.has("kafka_stream_thread_process_total")).as(before.text()).isTrue();
        double processedBefore = before.sum("kafka_stream_thread_process_total", Map.of("service", "topology"));

        TurnScript turn = TurnScript.builder("turn-metrics").message("msg-1", 10).build();
        cluster.gateway().send(turn.events());
        cluster.gateway().sendRaw(turn.runId(), "not json".getBytes(StandardCharsets.UTF_8));
        cluster.upserts().awaitEnd(turn.turnId(), TIMEOUT);

        Awaitility.await("processed records and the dead letter on the scrape").atMost(TIMEOUT).untilAsserted(() -> {
            PrometheusScrape after = scrape();
            assertThat(after.sum("kafka_stream_thread_process_total"))
                    .isGreaterThanOrEqualTo(processedBefore + turn.size() + 1);
            assertThat(after.sum("kafka_stream_turnstream_dead_letter_total")).isEqualTo(1);
            assertThat(after.sum("kafka_producer_record_send_total")).isPositive();
        });
    }

    private static PrometheusScrape scrape() {
        return PrometheusScrape.of("http://127.0.0.1:" + topology.healthPort());
    }
}
