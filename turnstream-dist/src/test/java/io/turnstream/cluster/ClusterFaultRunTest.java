package io.turnstream.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** What every service of a fault run is configured with. */
class ClusterFaultRunTest {

    @Test
    void theRunsOwnSettingsComeFirstAndTheGivenConfigGoesOverThemToEveryService() {
        Properties given = new Properties();
        given.setProperty("producer.retry.backoff.ms", "20");
        given.setProperty("turnstream.application.id", "mine");

        Properties config = ClusterFaultRun.serviceConfig(settings(50, given));

        assertThat(config.getProperty("producer.retry.backoff.ms")).isEqualTo("20");
        assertThat(config.getProperty("turnstream.application.id")).isEqualTo("mine");
        assertThat(config.getProperty("turnstream.simulated.tokens-per-second")).isEqualTo("5");
        assertThat(config.getProperty("turnstream.gateway.tenant.max-concurrent-turns")).isEqualTo("100");
    }

    @Test
    void withNothingGivenTheServicesRunTheShippedDefaults() {
        Properties config = ClusterFaultRun.serviceConfig(settings(200, new Properties()));

        assertThat(config.stringPropertyNames()).allMatch(key -> key.startsWith("turnstream."));
        assertThat(config.getProperty("turnstream.application.id")).isEqualTo("cluster-faults");
    }

    @Test
    void theSettingsKeepTheirOwnCopyOfTheConfig() {
        Properties given = new Properties();
        ClusterFaultRun.Settings settings = settings(20, given);
        given.setProperty("late", "1");

        assertThat(settings.config()).doesNotContainKey("late");
    }

    private static ClusterFaultRun.Settings settings(int turns, Properties config) {
        return new ClusterFaultRun.Settings(turns, 20, 5, Duration.ofSeconds(1), "cp", Path.of("logs"), config);
    }
}
