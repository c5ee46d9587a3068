package io.turnstream.cli;

import io.turnstream.runtime.Settings;
import io.turnstream.runtime.TurnstreamKeys;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Collection;
import picocli.CommandLine.Option;

/**
 * The options every Kafka-facing subcommand shares: {@code --bootstrap-servers} (default from
 * {@code TURNSTREAM_BOOTSTRAP_SERVERS}) and {@code --config FILE}. Use it as
 * {@code @Mixin KafkaOptions kafka;} and start with {@link #connect(Collection)}.
 */
public final class KafkaOptions {

    @Option(names = "--bootstrap-servers", paramLabel = "HOST:PORT[,...]",
            defaultValue = "${env:" + Settings.BOOTSTRAP_ENV + "}",
            description = "Kafka brokers to connect to (default: $" + Settings.BOOTSTRAP_ENV
                    + ", else bootstrap.servers from --config).")
    private String bootstrapServers;

    @Option(names = "--config", paramLabel = "FILE",
            description = "Properties file: turnstream.* settings and any Kafka client or Streams property "
                    + "(security.protocol, sasl.*, ssl.*, tuning), passed to Kafka unchanged.")
    private Path configFile;

    /** The settings from {@code --config}, the environment and the flag; fails when no broker is named. */
    public Settings settings() {
        Settings settings = settingsWithoutBroker();
        if (settings.bootstrapServers() == null || settings.bootstrapServers().isBlank()) {
            throw new CliFailure(ExitCodes.USAGE, "no Kafka broker given: pass --bootstrap-servers HOST:PORT or set "
                    + Settings.BOOTSTRAP_ENV);
        }
        return settings;
    }

    /** The settings from {@code --config}, the environment and the flag, for commands that may not need a broker. */
    public Settings settingsWithoutBroker() {
        try {
            return Settings.load(configFile, bootstrapServers);
        } catch (NoSuchFileException e) {
            throw new CliFailure(ExitCodes.CONFIG, "config file " + configFile + " does not exist");
        } catch (TurnstreamKeys.UnknownKeyException e) {
            throw new CliFailure(ExitCodes.CONFIG, "config file " + e.getMessage());
        } catch (IOException | IllegalArgumentException e) {
            throw new CliFailure(ExitCodes.CONFIG, "cannot read config file " + configFile + ": " + e.getMessage());
        }
    }

    /**
     * {@link #settings()}, checked against the cluster: it answers within the connect timeout and
     * holds {@code requiredTopics} ({@link ClusterCheck#require}, which also fills in what depends on
     * the cluster). Fails with one clear line otherwise.
     */
    public Settings connect(Collection<String> requiredTopics) {
        return ClusterCheck.require(settings(), requiredTopics);
    }
}
