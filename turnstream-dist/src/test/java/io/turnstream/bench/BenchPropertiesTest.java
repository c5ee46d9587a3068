package io.turnstream.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.turnstream.runtime.Settings;
import io.turnstream.topology.TopologyConfig;
import java.io.IOException;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** What {@code bench --config} hands on to the applications it starts, and what it refuses. */
class BenchPropertiesTest {

    @Test
    void theTopologysOwnKeysReachTheBenchsTopologyBesideKafkasPrefixedKeys() throws IOException {
        Properties file = new Properties();
        file.setProperty(TopologyConfig.COMMIT_BEHIND_INTERVAL_MS, "900");
        file.setProperty(TopologyConfig.BATCH_TIMEOUT_MS, "250");
        file.setProperty("turnstream.streams.max-thread-replacements", "3");
        file.setProperty("main.consumer.max.poll.records", "500");

        for (boolean cluster : new boolean[] {false, true}) {
            try (BenchCluster apps = BenchCluster.on("127.0.0.1:1", (short) 1,
                    BenchProperties.from(Settings.of(file), cluster), 4)) {
                TopologyConfig config = apps.topologyConfig("app", 0, "state");
                assertThat(config.commitPacing().behindIntervalMs()).isEqualTo(900);
                assertThat(config.batchTimeoutMs()).isEqualTo(250);
                assertThat(config.streamsProperties()).containsEntry("main.consumer.max.poll.records", "500");
                assertThat(apps.runtimeOptions().maxThreadReplacements()).isEqualTo(3);
            }
        }
    }

    @Test
    void aKeyTheBenchSetsItselfIsRefusedByNameWithOrWithoutACluster() {
        Properties file = new Properties();
        file.setProperty("turnstream.topic.upserts", "mine.upserts");
        file.setProperty(TopologyConfig.MIN_GROWTH_FRACTION, "0.5");
        file.setProperty("commit.interval.ms", "75");

        for (boolean cluster : new boolean[] {false, true}) {
            assertThatThrownBy(() -> BenchProperties.from(Settings.of(file), cluster))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("turnstream.batch.min-growth-fraction, turnstream.topic.upserts are set by the "
                            + "bench for each application it starts")
                    .hasMessageContaining("--growth-fraction");
        }
        Properties servers = new Properties();
        servers.setProperty("bootstrap.servers", "elsewhere:9092");
        assertThatThrownBy(() -> BenchProperties.from(Settings.of(servers), true))
                .hasMessageStartingWith("bootstrap.servers is set by the bench");
    }

    @Test
    void aServicesKeyGoesToTheFaultRunsButIsRefusedWithoutAClusterWhereNoServiceReadsIt() {
        Properties file = new Properties();
        file.setProperty("turnstream.gateway.tenant.max-concurrent-turns", "7");
        file.setProperty(TopologyConfig.COMMIT_INTERVAL_MS, "50");

        assertThat(BenchProperties.from(Settings.of(file), true)).isEqualTo(file);
        assertThatThrownBy(() -> BenchProperties.from(Settings.of(file), false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("turnstream.gateway.tenant.max-concurrent-turns is read by neither the topology "
                        + "nor the pass-through app")
                .hasMessageContaining(TopologyConfig.COMMIT_BEHIND_INTERVAL_MS);
    }
}
