package io.turnstream.cli;

import io.turnstream.model.Topics;
import io.turnstream.runtime.Failures;
import io.turnstream.runtime.ServiceMetrics;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.StreamsService;
import io.turnstream.topology.TopologyConfig;
import io.turnstream.topology.UpsertTopology;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.config.ConfigException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code turnstream topology}: runs the upsert topology until stopped. */
@Command(name = "topology", mixinStandardHelpOptions = true, versionProvider = TurnstreamVersion.class,
        description = {"Runs the upsert topology (Kafka Streams, exactly-once).",
            "Reads llm.raw-events; writes llm.upserts, llm.item-state, llm.tool-calls and",
            "llm.raw-events.dlq. Any Kafka Streams, consumer or producer property in --config",
            "is passed through. Runs until SIGTERM or Ctrl-C, then commits and closes."})
public final class TopologyCommand implements Callable<Integer> {

    /** The service's own jar, {@code turnstream-topology.jar}: this command alone, with the flags of {@code turnstream topology}. */
    public static void main(String[] args) {
        Launcher.main(new TopologyCommand(), "turnstream-topology", args);
    }

    @Mixin
    private KafkaOptions kafka;

    @Mixin
    private HealthHostOption healthHost;

    @Option(names = "--state-dir", paramLabel = "DIR",
            description = "Where the local state stores live (default: <tmp>/turnstream-state); "
                    + "they are rebuilt from their changelogs when lost.")
    private Path stateDir;

    @Option(names = "--application-id", paramLabel = "ID",
            description = "Kafka Streams application id: consumer group and prefix of internal topics "
                    + "(default: " + TopologyConfig.DEFAULT_APPLICATION_ID + ").")
    private String applicationId;

    @Option(names = "--health-port", paramLabel = "P", defaultValue = "8081",
            description = "HTTP port of /health (200 when RUNNING, else 503), /health/live and "
                    + "/metrics/prometheus (default: ${DEFAULT-VALUE}; 0 picks a free port, -1 turns it off).")
    private int healthPort;

    @Override
    public Integer call() {
        Settings settings = healthHost.applyTo(kafka.settings());
        if (stateDir != null) {
            settings = settings.with(TopologyConfig.STATE_DIR, stateDir.toString());
        }
        if (applicationId != null) {
            settings = settings.with(TopologyConfig.APPLICATION_ID, applicationId);
        }
        TopologyConfig config;
        StreamsService.Options options;
        try {
            config = TopologyConfig.from(settings);
            options = StreamsService.Options.from(settings, healthPort);
        } catch (IllegalArgumentException e) {
            throw new CliFailure(ExitCodes.CONFIG, e.getMessage(), e);
        }
        Topics topics = config.topics();
        settings = ClusterCheck.require(settings, List.of(topics.rawEvents(), topics.upserts(), topics.itemState(),
                topics.toolCalls(), topics.deadLetters()));
        // read again with what the cluster filled in (valid above, so it cannot fail now)
        config = TopologyConfig.from(settings);
        try (ServiceMetrics metrics = ServiceMetrics.create("topology", settings)) {
            StreamsService service;
            try {
                service = StreamsService.start(UpsertTopology.build(config), config.streamsProperties(), options, metrics);
            } catch (IllegalStateException | KafkaException e) {
                int code = Failures.causedBy(e, ConfigException.class) ? ExitCodes.CONFIG : ExitCodes.FAILURE;
                throw new CliFailure(code, "cannot start the topology: " + Failures.describe(e), e);
            }
            UntilStopped.run("topology", service, service.failure());
        }
        return ExitCodes.OK;
    }
}
