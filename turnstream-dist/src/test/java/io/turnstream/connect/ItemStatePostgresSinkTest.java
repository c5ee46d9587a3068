package io.turnstream.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.cli.ConnectCommand;
import io.turnstream.model.Json;
import io.turnstream.model.OutputItem;
import io.turnstream.model.PayloadType;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.Topics;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiPayloadType;
import io.turnstream.model.UpsertEnvelope;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.EmbeddedKafkaBroker;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.TopicAdmin;
import io.turnstream.schema.AvroWireFormat;
import io.turnstream.schema.FakeSchemaRegistry;
import io.turnstream.schema.SchemaRegistryClient;
import io.turnstream.schema.WireFormats;
import io.turnstream.testsupport.UsesBroker;
import io.turnstream.testsupport.UsesPostgres;
import io.turnstream.topology.TopologyConfig;
import io.turnstream.topology.UpsertTopology;
import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * The whole path with real parts: raw events into the embedded broker, the upsert topology in Kafka
 * Streams, {@code llm.item-state}, {@code turnstream connect} running a Connect standalone worker
 * with the bundled sink config, and a real Postgres. The table must end up holding exactly the
 * final state of every item, with JSON on the wire and with Avro through a schema registry.
 */
@UsesBroker
@UsesPostgres
class ItemStatePostgresSinkTest {

    private static final Duration PATIENCE = Duration.ofSeconds(60);
    private static final String CONNECTOR = "turnstream-item-state-postgres";

    private static EmbeddedKafkaBroker broker;
    private static PostgresServer postgres;
    private static FakeSchemaRegistry registry;
    private static ConnectWorker worker;
    private static KafkaStreams jsonTopology;
    private static KafkaProducer<String, byte[]> producer;
    private static Path workDir;

    @BeforeAll
    static void startEverything() throws Exception {
        workDir = Files.createTempDirectory("turnstream-sink-test");
        broker = EmbeddedKafkaBroker.onFreePort().start();
        TopicAdmin.createAll(clientProps(), Topics.DEFAULTS, 1, (short) 1);
        postgres = PostgresServer.start();
        registry = FakeSchemaRegistry.start();
        producer = new KafkaProducer<>(clientProps(), new StringSerializer(), new ByteArraySerializer());

        worker = connectCommand("--bootstrap-servers", broker.bootstrapServers(),
                "--worker-config", testWorkerConfig().toString(),
                "--jdbc-url", postgres.jdbcUrl(), "--jdbc-user", PostgresServer.USER, "--create-table").start();
        jsonTopology = startTopology(topologySettings("json-topology"));
    }

    @AfterAll
    static void stopEverything() throws Exception {
        for (AutoCloseable part : new AutoCloseable[] {producer,
                jsonTopology == null ? null : () -> jsonTopology.close(Duration.ofSeconds(30)),
                worker, registry, postgres, broker}) {
            if (part != null) {
                part.close();
            }
        }
        Utils.delete(workDir.toFile());
    }

    @Test
    void aTurnThroughTheTopologyLeavesOneRowPerItemHoldingItsFinalState() throws Exception {
        String turn = "turn-" + UUID.randomUUID();

        sendWeatherTurn(turn, Topics.DEFAULTS, WireFormat.JSON);

        Map<String, UpsertEnvelope> finalStates = finalItemStates(turn, Topics.DEFAULTS, WireFormat.JSON);
        assertThat(finalStates.keySet()).containsExactlyInAnyOrder(turn + "/turn", turn + "/" + turn + "-user-prompt",
                turn + "/think-1", turn + "/call-item", turn + "/out-item", turn + "/msg-1");
        await().atMost(PATIENCE).untilAsserted(() ->
                assertThat(rowsOf(turn)).containsExactlyInAnyOrderElementsOf(expectedRows(finalStates.values())));
        assertTheWeatherTurnReadsBackFromSql(turn);
    }

    @Test
    void theWorkerServesConnectsRestApiWithTheSinkRunning() throws Exception {
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                worker.restUrl().resolve("/connectors/" + CONNECTOR + "/status")).build(), HttpResponse.BodyHandlers.ofString());

        JsonNode status = Json.MAPPER.readTree(response.body());
        assertThat(status.at("/connector/state").asText()).isEqualTo("RUNNING");
        assertThat(status.at("/tasks/0/state").asText()).isEqualTo("RUNNING");
    }

    @Test
    void withAvroOnTheWireTheSameTurnLandsInTheTable() throws Exception {
        Settings avro = avroSettings();
        TopicAdmin.createAll(clientProps(), avro.topics(), 1, (short) 1);
        Map<String, String> connector = ItemStateSink.connectorConfig(null, avro, postgres.jdbcUrl(), PostgresServer.USER, Map.of());
        connector.put("name", CONNECTOR + "-avro");
        worker.deploy(connector, PATIENCE);
        WireFormat wire = WireFormats.from(avro);
        String turn = "turn-" + UUID.randomUUID();

        try (KafkaStreams avroTopology = startTopology(avro)) {
            sendWeatherTurn(turn, avro.topics(), wire);

            Map<String, UpsertEnvelope> finalStates = finalItemStates(turn, avro.topics(), wire);
            await().atMost(PATIENCE).untilAsserted(() ->
                    assertThat(rowsOf(turn)).containsExactlyInAnyOrderElementsOf(expectedRows(finalStates.values())));
        }
        assertTheWeatherTurnReadsBackFromSql(turn);
        assertThat(readUntil(avro.topics().itemState(), r -> r.key().startsWith(turn)).value()[0])
                .as("Confluent magic byte").isEqualTo(AvroWireFormat.MAGIC_BYTE);
    }

    @Test
    void aRecordThatIsNotAnEnvelopeGoesToTheDeadLetterTopicAndTheSinkCarriesOnPastItAndATombstone() throws Exception {
        String turn = "turn-" + UUID.randomUUID();
        UpsertEnvelope started = new UpsertEnvelope("evt-1", 1_760_000_000_000L, turn, 1, PayloadType.TURN_EVENT,
                new UITurnEvent(UiPayloadType.TURN_STARTED, turn, "thread-1", "m", "p", null, null, null));

        producer.send(new ProducerRecord<>(Topics.DEFAULTS.itemState(), turn + "/broken", "{not json".getBytes(StandardCharsets.UTF_8)));
        producer.send(new ProducerRecord<>(Topics.DEFAULTS.itemState(), turn + "/gone", null));
        producer.send(new ProducerRecord<>(Topics.DEFAULTS.itemState(), turn + "/turn", Json.toBytes(started))).get();

        await().atMost(PATIENCE).untilAsserted(() ->
                assertThat(row(turn, "turn")).containsEntry("event_type", "turn_started").containsEntry("seq", 1L));
        ConsumerRecord<String, byte[]> deadLetter = readUntil(Topics.DEFAULTS.itemState() + ".dlq",
                r -> r.key().equals(turn + "/broken"));
        assertThat(new String(deadLetter.value(), StandardCharsets.UTF_8)).isEqualTo("{not json");
        assertThat(header(deadLetter, "__connect.errors.exception.message")).contains("not an UpsertEnvelope");
    }

    private static final String REPLY = "The weather in Paris is mild, about twenty-one degrees, with a light breeze from the west. ";

    /** A user prompt, reasoning, a tool call and its output, and a streamed reply, as a gateway publishes them. */
    private static void sendWeatherTurn(String turn, Topics topics, WireFormat wire) {
        sendRawEvents(turn, topics, wire,
                new StreamPayload.ResponseStart("resp-1", turn, "thread-7", null, "claude-x", "anthropic", 0),
                new StreamPayload.ItemStart(turn + "-user-prompt", "message", "What is the weather in Paris?", null, null, null, null),
                new StreamPayload.ItemDone(turn + "-user-prompt", null),
                new StreamPayload.ItemStart("think-1", "reasoning", null, null, null, null, null),
                new StreamPayload.ItemDelta("think-1", "The user wants the weather; call the tool."),
                new StreamPayload.ItemDone("think-1", null),
                new StreamPayload.ItemStart("call-item", "function_call", null, "get_weather", null, "call-1", null),
                new StreamPayload.ItemDone("call-item", new OutputItem("call-item", "function_call", null, null, "get_weather",
                        TextNode.valueOf("{\"city\":\"Paris\"}"), "call-1", null, null, null)),
                new StreamPayload.ItemStart("out-item", "function_call_output", null, null, null, "call-1", null),
                new StreamPayload.ItemDone("out-item", new OutputItem("out-item", "function_call_output", null, null, null,
                        null, "call-1", TextNode.valueOf("{\"temp_c\":21}"), true, null)),
                new StreamPayload.ItemStart("msg-1", "message", null, null, null, null, null),
                new StreamPayload.ItemDelta("msg-1", REPLY.substring(0, 30)),
                new StreamPayload.ItemDelta("msg-1", REPLY.substring(30, 60)),
                new StreamPayload.ItemDelta("msg-1", REPLY.substring(60)),
                new StreamPayload.ItemDone("msg-1", null),
                new StreamPayload.ResponseDone("resp-1", ResponseStatus.COMPLETE, new StreamPayload.Usage(12, 34, 46), "stop"));
    }

    private static void assertTheWeatherTurnReadsBackFromSql(String turn) throws SQLException {
        assertThat(row(turn, "msg-1")).containsEntry("content", REPLY).containsEntry("change_type", "completed")
                .containsEntry("origin", "agent").containsEntry("thread_id", "thread-7");
        assertThat(row(turn, turn + "-user-prompt")).containsEntry("origin", "user")
                .containsEntry("content", "What is the weather in Paris?");
        assertThat(queryOne("SELECT tool_arguments->>'city' AS city, tool_name FROM turnstream_item_state"
                + " WHERE turn_id = '" + turn + "' AND item_id = 'call-item'"))
                .containsEntry("city", "Paris").containsEntry("tool_name", "get_weather");
        assertThat(queryOne("SELECT (tool_output->>'temp_c')::int AS temp, success FROM turnstream_item_state"
                + " WHERE turn_id = '" + turn + "' AND item_id = 'out-item'"))
                .containsEntry("temp", 21).containsEntry("success", true);
        assertThat(row(turn, "turn")).containsEntry("event_type", "turn_completed").containsEntry("status", "complete")
                .containsEntry("total_tokens", 46L);
    }

    /** What the table must hold for each final envelope, in the envelope's own terms. */
    private static List<Map<String, Object>> expectedRows(Iterable<UpsertEnvelope> envelopes) {
        List<Map<String, Object>> rows = new ArrayList<>();
        for (UpsertEnvelope envelope : envelopes) {
            Map<String, Object> row = new HashMap<>();
            row.put("turn_id", envelope.turnId());
            row.put("event_id", envelope.eventId());
            row.put("seq", envelope.seq());
            row.put("updated_at", envelope.timestamp());
            row.put("event_type", envelope.payload().type().wire());
            boolean item = envelope.payload() instanceof UIUpsert;
            UIUpsert upsert = item ? (UIUpsert) envelope.payload() : null;
            row.put("item_id", item ? upsert.itemId() : "turn");
            row.put("item_type", item ? upsert.itemType().wire() : null);
            row.put("change_type", item ? upsert.changeType().wire() : null);
            row.put("version", item ? upsert.version() : null);
            row.put("content", item ? upsert.content() : null);
            rows.add(row);
        }
        return rows;
    }

    private static List<Map<String, Object>> rowsOf(String turn) throws SQLException {
        return query("SELECT turn_id, item_id, event_id, seq, (extract(epoch FROM updated_at) * 1000)::bigint AS updated_at,"
                + " event_type, item_type, change_type, version, content FROM turnstream_item_state WHERE turn_id = '" + turn + "'");
    }

    private static Map<String, Object> row(String turn, String itemId) throws SQLException {
        return queryOne("SELECT * FROM turnstream_item_state WHERE turn_id = '" + turn + "' AND item_id = '" + itemId + "'");
    }

    private static Map<String, Object> queryOne(String sql) throws SQLException {
        List<Map<String, Object>> rows = query(sql);
        assertThat(rows).hasSize(1);
        return rows.get(0);
    }

    private static List<Map<String, Object>> query(String sql) throws SQLException {
        List<Map<String, Object>> rows = new ArrayList<>();
        try (Connection connection = postgres.connect(); Statement statement = connection.createStatement();
             ResultSet result = statement.executeQuery(sql)) {
            while (result.next()) {
                Map<String, Object> row = new HashMap<>();
                for (int i = 1; i <= result.getMetaData().getColumnCount(); i++) {
                    row.put(result.getMetaData().getColumnLabel(i), result.getObject(i));
                }
                rows.add(row);
            }
        }
        return rows;
    }

    private static void sendRawEvents(String turn, Topics topics, WireFormat wire, StreamPayload... payloads) {
        String runId = "run-" + turn;
        int n = 0;
        for (StreamPayload payload : payloads) {
            StreamEvent event = StreamEvent.of(turn + "-evt-" + n++, System.currentTimeMillis(), runId, payload);
            producer.send(new ProducerRecord<>(topics.rawEvents(), runId, wire.write(topics.rawEvents(), event)));
        }
        producer.flush();
    }

    /** The last envelope of every key of the turn on the item-state topic, read once the turn has completed. */
    private static Map<String, UpsertEnvelope> finalItemStates(String turn, Topics topics, WireFormat wire) {
        Map<String, UpsertEnvelope> latest = new LinkedHashMap<>();
        readUntil(topics.itemState(), record -> {
            if (!record.key().startsWith(turn + "/")) {
                return false;
            }
            UpsertEnvelope envelope;
            try {
                envelope = wire.read(topics.itemState(), record.value(), UpsertEnvelope.class);
            } catch (IOException e) {
                throw new AssertionError("the topology wrote a record its own wire format cannot read", e);
            }
            latest.put(record.key(), envelope);
            return envelope.payload().type() == UiPayloadType.TURN_COMPLETED;
        });
        return latest;
    }

    private static ConsumerRecord<String, byte[]> readUntil(String topic, Predicate<ConsumerRecord<String, byte[]>> last) {
        Properties props = clientProps();
        props.put(ConsumerConfig.GROUP_ID_CONFIG, "reader-" + UUID.randomUUID());
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(props, new StringDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            List<ConsumerRecord<String, byte[]>> found = new ArrayList<>();
            await().atMost(PATIENCE).until(() -> {
                for (ConsumerRecord<String, byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    if (last.test(record)) {
                        found.add(record);
                        return true;
                    }
                }
                return false;
            });
            return found.get(0);
        }
    }

    private static String header(ConsumerRecord<String, byte[]> record, String name) {
        Header header = record.headers().lastHeader(name);
        return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }

    private static ConnectCommand connectCommand(String... args) {
        CommandLine commandLine = new CommandLine(new ConnectCommand());
        commandLine.parseArgs(args);
        return commandLine.getCommand();
    }

    /** The bundled worker config, with the REST API on a free port and offsets in the test's directory. */
    private static Path testWorkerConfig() throws IOException {
        Properties config = new Properties();
        try (InputStream in = ItemStateSink.class.getClassLoader().getResourceAsStream(ItemStateSink.WORKER_CONFIG)) {
            config.load(in);
        }
        config.setProperty("listeners", "http://127.0.0.1:0");
        config.setProperty("offset.storage.file.filename", workDir.resolve("connect.offsets").toString());
        Path file = workDir.resolve("worker.properties");
        try (var out = Files.newOutputStream(file)) {
            config.store(out, null);
        }
        return file;
    }

    private static Settings topologySettings(String applicationId) {
        return Settings.of(clientProps())
                .with(TopologyConfig.STATE_DIR, workDir.resolve(applicationId).toString())
                .with(TopologyConfig.APPLICATION_ID, applicationId);
    }

    /** Every topic renamed under "avro.", Avro on the wire through the fake registry. */
    private static Settings avroSettings() {
        Settings settings = topologySettings("avro-topology")
                .with(WireFormats.FORMAT_CONFIG, "avro")
                .with(SchemaRegistryClient.URL_CONFIG, registry.url());
        for (Map.Entry<String, String> role : Topics.DEFAULTS.byRole().entrySet()) {
            settings = settings.with(Topics.PREFIX + role.getKey(), "avro." + role.getValue());
        }
        return settings;
    }

    private static KafkaStreams startTopology(Settings settings) {
        TopologyConfig config = TopologyConfig.from(settings);
        KafkaStreams streams = new KafkaStreams(UpsertTopology.build(config), config.streamsProperties());
        streams.start();
        return streams;
    }

    private static Properties clientProps() {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        return props;
    }
}
