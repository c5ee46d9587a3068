package io.turnstream.runtime;

import io.turnstream.topology.TopologyConfig;
import io.turnstream.topology.UpsertTopology;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import org.awaitility.Awaitility;

/** The upsert topology run in this JVM by {@link StreamsService}, with settings that keep tests quick. */
public final class TopologyInstance {

    private TopologyInstance() {
    }

    /**
     * Settings for a test instance: the shipped commit pacing (75 ms while fresh), a short session timeout
     * (a killed member is noticed within seconds), plus {@code extra}.
     */
    public static Properties settings(String bootstrapServers, String applicationId, Path stateDir, Map<String, String> extra) {
        Properties props = new Properties();
        props.setProperty("bootstrap.servers", bootstrapServers);
        props.setProperty(TopologyConfig.APPLICATION_ID, applicationId);
        props.setProperty(TopologyConfig.STATE_DIR, stateDir.toString());
        props.setProperty("session.timeout.ms", "6000");
        props.setProperty("heartbeat.interval.ms", "1000");
        props.putAll(extra);
        return props;
    }

    /** Starts the topology with a health endpoint on a free port and waits until it is RUNNING. */
    public static StreamsService start(Properties settingsProps) {
        Settings settings = Settings.of(settingsProps);
        TopologyConfig config = TopologyConfig.from(settings);
        StreamsService service = StreamsService.start(UpsertTopology.build(config), config.streamsProperties(),
                StreamsService.Options.from(settings, 0));
        awaitRunning(service);
        return service;
    }

    public static void awaitRunning(StreamsService service) {
        Awaitility.await("Kafka Streams RUNNING").atMost(Duration.ofSeconds(60)).until(service::isRunning);
    }
}
