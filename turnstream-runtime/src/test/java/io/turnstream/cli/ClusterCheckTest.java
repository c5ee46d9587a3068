package io.turnstream.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.runtime.EmbeddedKafkaBroker;
import io.turnstream.runtime.Settings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a service's start reads from the cluster: its group members' session timeout (docs/runtime.md, "Failover"). */
// turnstream-test-support's @UsesBroker, which this module cannot depend on (test-support depends on it)
@Tag("broker")
class ClusterCheckTest {

    @TempDir
    Path dir;

    @Test
    void onTurnstreamsBrokersMembersAreTakenForDeadAfterThreeSeconds() throws Exception {
        try (EmbeddedKafkaBroker broker = new EmbeddedKafkaBroker(0, Files.createDirectories(dir.resolve("kafka")),
                Map.of()).start()) {
            Settings connected = ClusterCheck.require(settingsFor(broker, Map.of()), List.of());

            assertThat(sessionTimeout(connected)).isEqualTo("3000");
            assertThat(sessionTimeout(ClusterCheck.require(
                    settingsFor(broker, Map.of(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000")), List.of())))
                    .as("a user's setting wins").isEqualTo("10000");
            assertThat(sessionTimeout(ClusterCheck.require(
                    settingsFor(broker, Map.of(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer")), List.of())))
                    .as("the new group protocols take it from the broker and refuse a member's").isNull();
        }
    }

    @Test
    void onBrokersAtKafkasDefaultsMembersAskForTheSixSecondsTheyAllow() throws Exception {
        Map<String, String> kafkaDefault = Map.of("group.min.session.timeout.ms", "6000");
        try (EmbeddedKafkaBroker broker = new EmbeddedKafkaBroker(0, Files.createDirectories(dir.resolve("kafka")),
                kafkaDefault).start()) {
            assertThat(sessionTimeout(ClusterCheck.require(settingsFor(broker, Map.of()), List.of())))
                    .isEqualTo("6000");
        }
    }

    private static Settings settingsFor(EmbeddedKafkaBroker broker, Map<String, String> kafka) {
        Properties props = new Properties();
        props.putAll(kafka);
        props.setProperty("bootstrap.servers", broker.bootstrapServers());
        return Settings.of(props);
    }

    private static String sessionTimeout(Settings settings) {
        return settings.kafkaProperties().getProperty(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG);
    }
}
