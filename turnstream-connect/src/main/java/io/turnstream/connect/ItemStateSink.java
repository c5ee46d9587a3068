package io.turnstream.connect;

import io.turnstream.model.Topics;
import io.turnstream.runtime.Settings;
import io.turnstream.schema.SchemaRegistryClient;
import io.turnstream.schema.WireFormats;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.CommonClientConfigs;

/**
 * The Postgres sink of {@code llm.item-state}: the worker and connector configs in
 * {@code connectors/} (bundled in the jar, or files given instead), completed from Turnstream's
 * settings, and the table they write.
 */
public final class ItemStateSink {

    public static final String WORKER_CONFIG = "connectors/worker.properties";
    public static final String CONNECTOR_CONFIG = "connectors/postgres-item-state-sink.properties";
    public static final String TABLE_DDL = "connectors/item-state-table.sql";

    public static final String JDBC_URL_ENV = "TURNSTREAM_JDBC_URL";
    public static final String JDBC_USER_ENV = "TURNSTREAM_JDBC_USER";
    public static final String JDBC_PASSWORD_ENV = "TURNSTREAM_JDBC_PASSWORD";

    private static final String PASSWORD = "connection.password";
    private static final Pattern ENV_REFERENCE = Pattern.compile("\\$\\{env:([^}:]+)}");
    /** Client settings the worker must hand to its consumers, producers and admin clients as well. */
    private static final List<String> CLIENT_SECURITY_PREFIXES = List.of("security.", "sasl.", "ssl.");
    private static final List<String> WORKER_CLIENT_PREFIXES = List.of("", "consumer.", "producer.", "admin.");
    private static final List<String> CONVERTER_SETTINGS = List.of(WireFormats.FORMAT_CONFIG,
            SchemaRegistryClient.URL_CONFIG, WireFormats.AUTO_REGISTER_CONFIG);

    private ItemStateSink() {
    }

    /**
     * The worker config: the file (bundled one when null), then the cluster's bootstrap servers and
     * security settings from Turnstream's settings, for the worker and every client it creates.
     */
    public static Map<String, String> workerConfig(Path file, Settings settings) throws IOException {
        Map<String, String> config = load(file, WORKER_CONFIG);
        if (settings.bootstrapServers() != null) {
            config.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, settings.bootstrapServers());
        }
        Properties kafka = settings.kafkaProperties();
        for (String key : kafka.stringPropertyNames()) {
            if (CLIENT_SECURITY_PREFIXES.stream().anyMatch(key::startsWith)) {
                WORKER_CLIENT_PREFIXES.forEach(prefix -> config.put(prefix + key, kafka.getProperty(key)));
            }
        }
        return config;
    }

    /**
     * The connector config: the file (bundled one when null); the topic and its dead-letter topic
     * when {@code turnstream.topic.item-state} renames it; the wire format and registry when set;
     * the JDBC URL and user when given. {@code ${env:NAME}} references must name set variables,
     * except the password, which is left out when unset (trust or peer authentication).
     *
     * @param env the environment the worker resolves {@code ${env:NAME}} from
     */
    public static Map<String, String> connectorConfig(Path file, Settings settings, String jdbcUrl, String jdbcUser,
                                                      Map<String, String> env) throws IOException {
        Map<String, String> config = load(file, CONNECTOR_CONFIG);
        String itemStateTopic = settings.get(Topics.PREFIX + "item-state", null);
        if (itemStateTopic != null) {
            config.put("topics", itemStateTopic);
            config.put("errors.deadletterqueue.topic.name", itemStateTopic + ".dlq");
        }
        for (String key : CONVERTER_SETTINGS) {
            String value = settings.get(key, null);
            if (value != null) {
                config.put("value.converter." + key, value);
            }
        }
        if (jdbcUrl != null && !jdbcUrl.isBlank()) {
            config.put("connection.url", jdbcUrl);
        }
        if (jdbcUser != null && !jdbcUser.isBlank()) {
            config.put("connection.username", jdbcUser);
        }
        requireEnvironment(config, env);
        return config;
    }

    /**
     * Creates the sink's table and index when missing ({@code connectors/item-state-table.sql}),
     * connecting as the connector will: its URL, user and password, {@code ${env:NAME}} resolved.
     */
    public static void createTable(Map<String, String> connectorConfig, Map<String, String> env)
            throws SQLException, IOException {
        String ddl;
        try (InputStream in = resource(TABLE_DDL)) {
            ddl = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        try (Connection connection = DriverManager.getConnection(resolve(connectorConfig.get("connection.url"), env),
                resolve(connectorConfig.get("connection.username"), env), resolve(connectorConfig.get(PASSWORD), env));
             Statement statement = connection.createStatement()) {
            for (String sql : ddl.replaceAll("--[^\n]*", "").split(";")) {
                if (!sql.isBlank()) {
                    statement.execute(sql);
                }
            }
        }
    }

    private static String resolve(String value, Map<String, String> env) {
        return value == null ? null
                : ENV_REFERENCE.matcher(value).replaceAll(reference -> Matcher.quoteReplacement(env.get(reference.group(1))));
    }

    private static void requireEnvironment(Map<String, String> config, Map<String, String> env) {
        List<String> missing = new ArrayList<>();
        for (Map.Entry<String, String> entry : Map.copyOf(config).entrySet()) {
            Matcher reference = ENV_REFERENCE.matcher(entry.getValue());
            while (reference.find()) {
                String variable = reference.group(1);
                if (env.containsKey(variable)) {
                    continue;
                }
                if (entry.getKey().equals(PASSWORD)) {
                    config.remove(PASSWORD);
                } else {
                    missing.add(entry.getKey() + " needs the environment variable " + variable + hint(entry.getKey()));
                }
            }
        }
        if (!missing.isEmpty()) {
            throw new IllegalArgumentException(String.join("; ", missing.stream().sorted().toList()));
        }
    }

    private static String hint(String key) {
        return switch (key) {
            case "connection.url" -> " or --jdbc-url (for example jdbc:postgresql://localhost:5432/turnstream)";
            case "connection.username" -> " or --jdbc-user";
            default -> "";
        };
    }

    private static Map<String, String> load(Path file, String bundled) throws IOException {
        Properties props = new Properties();
        try (Reader reader = file != null ? Files.newBufferedReader(file)
                : new InputStreamReader(resource(bundled), StandardCharsets.UTF_8)) {
            props.load(reader);
        }
        Map<String, String> config = new LinkedHashMap<>();
        props.stringPropertyNames().forEach(key -> config.put(key, props.getProperty(key).strip()));
        return config;
    }

    private static InputStream resource(String name) throws IOException {
        InputStream in = ItemStateSink.class.getClassLoader().getResourceAsStream(name);
        if (in == null) {
            throw new IOException(name + " is not on the classpath");
        }
        return in;
    }
}
