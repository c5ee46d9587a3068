package io.turnstream.cli;

import io.turnstream.connect.ConnectWorker;
import io.turnstream.connect.ItemStateSink;
import io.turnstream.runtime.Settings;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.kafka.common.config.ConfigException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code turnstream connect}: a Kafka Connect standalone worker in this process, running the
 * Postgres sink of {@code llm.item-state} from {@code connectors/}.
 */
@Command(name = "connect", mixinStandardHelpOptions = true,
        description = "Runs a Kafka Connect standalone worker with the Postgres sink of llm.item-state "
                + "(one row per turn and item, upserted by key).")
public final class ConnectCommand implements Callable<Integer> {

    @Option(names = "--bootstrap-servers", defaultValue = "${env:" + Settings.BOOTSTRAP_ENV + "}",
            description = "Kafka bootstrap servers (default: $" + Settings.BOOTSTRAP_ENV + ", else the worker config's).")
    String bootstrapServers;

    @Option(names = "--config", paramLabel = "FILE",
            description = "Turnstream properties: topic names, turnstream.serde.format, schema.registry.url, Kafka security settings.")
    Path config;

    @Option(names = "--worker-config", paramLabel = "FILE",
            description = "Connect worker properties (default: the bundled connectors/worker.properties).")
    Path workerConfig;

    @Option(names = "--connector-config", paramLabel = "FILE",
            description = "Connector properties (default: the bundled connectors/postgres-item-state-sink.properties).")
    Path connectorConfig;

    @Option(names = "--jdbc-url", defaultValue = "${env:" + ItemStateSink.JDBC_URL_ENV + "}",
            description = "Postgres JDBC URL, e.g. jdbc:postgresql://localhost:5432/turnstream (default: $"
                    + ItemStateSink.JDBC_URL_ENV + ").")
    String jdbcUrl;

    @Option(names = "--jdbc-user", defaultValue = "${env:" + ItemStateSink.JDBC_USER_ENV + "}",
            description = "Postgres user (default: $" + ItemStateSink.JDBC_USER_ENV + "). The password comes only from $"
                    + ItemStateSink.JDBC_PASSWORD_ENV + ".")
    String jdbcUser;

    @Option(names = "--create-table",
            description = "Create the table (connectors/item-state-table.sql) if it does not exist, before starting.")
    boolean createTable;

    @Override
    public Integer call() throws Exception {
        ConnectWorker running;
        try {
            running = start();
        } catch (IllegalArgumentException | IllegalStateException | ConfigException e) {
            System.err.println("turnstream connect: " + e.getMessage());
            return 1;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(running::close, "connect-shutdown"));
        running.awaitStop();
        return 0;
    }

    /**
     * Starts the worker and deploys the sink, returning once the connector and its tasks run; the
     * caller stops the worker.
     *
     * @throws IllegalArgumentException when the configuration is incomplete or Connect rejects it
     * @throws ConfigException when the worker config is invalid
     * @throws IllegalStateException when the table cannot be created or the connector fails to start
     */
    public ConnectWorker start() throws Exception {
        Settings settings = Settings.load(config, bootstrapServers);
        Map<String, String> env = System.getenv();
        Map<String, String> connector = ItemStateSink.connectorConfig(connectorConfig, settings, jdbcUrl, jdbcUser, env);
        if (createTable) {
            try {
                ItemStateSink.createTable(connector, env);
            } catch (SQLException e) {
                throw new IllegalStateException("cannot create the table: " + e.getMessage(), e);
            }
        }
        ConnectWorker worker = ConnectWorker.start(ItemStateSink.workerConfig(workerConfig, settings));
        try {
            worker.deploy(connector, Duration.ofMinutes(2));
        } catch (Exception e) {
            worker.close();
            throw e;
        }
        System.out.println("connector " + connector.get("name") + " running: " + connector.get("topics")
                + " -> table " + connector.get("collection.name.format") + "; worker REST API at " + worker.restUrl());
        return worker;
    }
}
