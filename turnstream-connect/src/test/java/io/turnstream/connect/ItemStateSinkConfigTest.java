package io.turnstream.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.turnstream.runtime.Settings;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.config.ConfigException;
import org.junit.jupiter.api.Test;

class ItemStateSinkConfigTest {

    private static final Settings NONE = Settings.of(new Properties());
    private static final Map<String, String> JDBC_ENV = Map.of(
            ItemStateSink.JDBC_URL_ENV, "jdbc:postgresql://db:5432/turnstream", ItemStateSink.JDBC_USER_ENV, "sink");

    @Test
    void theBundledConnectorUpsertsItemStateByTurnAndItemWithSecretsFromTheEnvironment() throws Exception {
        Map<String, String> config = ItemStateSink.connectorConfig(null, NONE, null, null,
                Map.of(ItemStateSink.JDBC_URL_ENV, "u", ItemStateSink.JDBC_USER_ENV, "v", ItemStateSink.JDBC_PASSWORD_ENV, "w"));

        assertThat(config)
                .containsEntry("connector.class", "io.debezium.connector.jdbc.JdbcSinkConnector")
                .containsEntry("topics", "llm.item-state")
                .containsEntry("insert.mode", "upsert")
                .containsEntry("primary.key.fields", "turn_id,item_id")
                .containsEntry("value.converter", ItemStateConverter.class.getName())
                .containsEntry("connection.url", "${env:TURNSTREAM_JDBC_URL}")
                .containsEntry("connection.password", "${env:TURNSTREAM_JDBC_PASSWORD}")
                .containsEntry("errors.deadletterqueue.topic.name", "llm.item-state.dlq");
    }

    @Test
    void flagsAndSettingsCompleteTheConnector() throws Exception {
        Settings settings = NONE.with("turnstream.topic.item-state", "prod.item-state")
                .with("turnstream.serde.format", "avro").with("schema.registry.url", "http://registry:8081");

        Map<String, String> config = ItemStateSink.connectorConfig(null, settings, "jdbc:postgresql://h/db", "writer", Map.of());

        assertThat(config)
                .containsEntry("topics", "prod.item-state")
                .containsEntry("errors.deadletterqueue.topic.name", "prod.item-state.dlq")
                .containsEntry("value.converter.turnstream.serde.format", "avro")
                .containsEntry("value.converter.schema.registry.url", "http://registry:8081")
                .containsEntry("connection.url", "jdbc:postgresql://h/db")
                .containsEntry("connection.username", "writer")
                .as("no password in the environment: trust or peer authentication").doesNotContainKey("connection.password");
    }

    @Test
    void aMissingJdbcUrlIsNamedWithTheWaysToGiveIt() {
        assertThatThrownBy(() -> ItemStateSink.connectorConfig(null, NONE, null, "sink", Map.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("connection.url needs the environment variable TURNSTREAM_JDBC_URL or --jdbc-url"
                        + " (for example jdbc:postgresql://localhost:5432/turnstream)");
    }

    @Test
    void theWorkerGetsTheClusterAndItsSecuritySettingsForEveryClient() throws Exception {
        Settings settings = NONE.with("bootstrap.servers", "kafka:9093").with("security.protocol", "SASL_SSL")
                .with("sasl.mechanism", "PLAIN").with("linger.ms", "5").with("turnstream.serde.format", "avro");

        Map<String, String> worker = ItemStateSink.workerConfig(null, settings);

        assertThat(worker)
                .containsEntry("bootstrap.servers", "kafka:9093")
                .containsEntry("security.protocol", "SASL_SSL")
                .containsEntry("consumer.security.protocol", "SASL_SSL")
                .containsEntry("producer.sasl.mechanism", "PLAIN")
                .containsEntry("admin.sasl.mechanism", "PLAIN")
                .containsEntry("plugin.discovery", "service_load")
                .doesNotContainKeys("linger.ms", "turnstream.serde.format");
        assertThat(ItemStateSink.connectorConfig(null, NONE, null, null, JDBC_ENV)).containsEntry("tasks.max", "1");
    }

    /** The topology writes llm.item-state transactionally: an aborted transaction's records must never reach the table. */
    @Test
    void theSinksConsumerReadsCommittedRecordsOnly() throws Exception {
        assertThat(ItemStateSink.workerConfig(null, NONE)).containsEntry("consumer.isolation.level", "read_committed");
    }

    @Test
    void theConverterReadsValuesOnlyAndNeedsAValidFormat() {
        ItemStateConverter converter = new ItemStateConverter();

        assertThatThrownBy(() -> converter.configure(Map.of(), true))
                .isInstanceOf(ConfigException.class).hasMessageContaining("StringConverter");
        assertThatThrownBy(() -> converter.configure(Map.of("turnstream.serde.format", "avro"), false))
                .isInstanceOf(ConfigException.class).hasMessageContaining("needs schema.registry.url");
    }
}
