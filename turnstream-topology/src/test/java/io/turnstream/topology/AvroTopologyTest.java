package io.turnstream.topology;

import static io.turnstream.topology.Events.delta;
import static io.turnstream.topology.Events.done;
import static io.turnstream.topology.Events.functionCallDone;
import static io.turnstream.topology.Events.functionCallStart;
import static io.turnstream.topology.Events.functionOutputDone;
import static io.turnstream.topology.Events.itemError;
import static io.turnstream.topology.Events.itemStart;
import static io.turnstream.topology.Events.responseDone;
import static io.turnstream.topology.Events.responseError;
import static io.turnstream.topology.Events.responseStart;
import static io.turnstream.topology.Events.withdrawn;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import io.turnstream.model.ItemAppend;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.Topics;
import io.turnstream.model.ToolCall;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UpsertEnvelope;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.TraceContext;
import io.turnstream.schema.AvroSchemas;
import io.turnstream.schema.AvroWireFormat;
import io.turnstream.schema.FakeSchemaRegistry;
import io.turnstream.schema.SchemaRegistryClient;
import io.turnstream.schema.SchemaRegistryException;
import io.turnstream.schema.WireFormats;
import io.turnstream.topology.TopologyHarness.DeadLetter;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Consumer;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The topology on the Avro wire format (Confluent framing, a Schema Registry over loopback HTTP):
 * the same turn gives the same upserts, item state, tool calls and appends as on JSON; a record that
 * is not Avro goes to the dead-letter topic with its reason (a JSON delta too: the JSON-only
 * {@link DeltaReader} must not read it); a registry that cannot be reached is never blamed on a record.
 */
class AvroTopologyTest {

    private static final String RUN = "run-1";
    private static final Topics TOPICS = TopologyConfig.defaults().topics();
    private static final Duration TICK = Duration.ofMillis(TopologyConfig.DEFAULT_PUNCTUATE_INTERVAL_MS);
    private static final String TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    private FakeSchemaRegistry registry;

    @BeforeEach
    void startRegistry() throws IOException {
        registry = FakeSchemaRegistry.start();
    }

    @AfterEach
    void stopRegistry() {
        registry.close();
    }

    /** What one run of a scenario left on every output topic, decoded. */
    private record Outputs(List<UpsertEnvelope> upserts, List<String> traceparents, Map<String, UpsertEnvelope> itemState,
                           List<ToolCall> toolCalls, List<ItemAppend> appends, List<DeadLetter> deadLetters) {

        List<String> described() {
            return upserts.stream().map(e -> TopologyHarness.describe(e.payload())).toList();
        }
    }

    @Test
    void aStreamedMessageAndAToolCallMakeTheSameRecordsOnAvroAsOnJson() {
        Outputs json = onJsonAndAvro(AvroTopologyTest::messageAndToolCall);

        assertThat(json.described()).containsExactly(
                "turn_started",
                "message created v1 origin=agent \"The weather in Paris \"",
                "message updated v2 origin=agent \"The weather in Paris is sunny and warm today, \"",
                "tool_call completed v1 get_weather {\"city\":\"Paris\"} call=call-1",
                "message updated v3 origin=agent \"The weather in Paris is sunny and warm today, with a light \"",
                "message completed v4 origin=agent \"The weather in Paris is sunny and warm today, with a light breeze.\"",
                "turn_completed complete");
        assertThat(json.upserts()).extracting(UpsertEnvelope::seq).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L);
        assertThat(json.toolCalls()).extracting(ToolCall::callId, ToolCall::toolName, c -> c.arguments().toString())
                .containsExactly(tuple("call-1", "get_weather", "{\"city\":\"Paris\"}"));
        assertThat(json.appends()).extracting(ItemAppend::itemId).contains("msg", "fc");
        assertThat(json.traceparents()).hasSize(7).containsOnly(TRACEPARENT);
        assertThat(json.deadLetters()).isEmpty();
    }

    @Test
    void aToolResultAWithdrawnItemAndAFailedTurnMakeTheSameRecordsOnAvroAsOnJson() {
        Outputs json = onJsonAndAvro(AvroTopologyTest::toolResultWithdrawalAndFailure);

        assertThat(json.described()).containsExactly(
                "turn_started",
                "tool_call completed v1 grep {\"pattern\":\"TODO\"} call=call-7",
                "tool_output completed v1 call=call-7 success=true \"3 matches\"",
                "reasoning created v1 provider=openai \"draft\"",
                "reasoning withdrawn v2",
                "message created v1 origin=agent \"Sorry\"",
                "error completed v2 overloaded: try later",
                "turn_error provider_error: stream broke");
        assertThat(json.upserts()).extracting(UpsertEnvelope::seq).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L);
        assertThat(json.deadLetters()).isEmpty();
    }

    @Test
    void recordsThatAreNotAvroAreDeadLetteredWithTheirReasonWhileTheTurnCarriesOn() {
        WireFormat gateway = avro(registry.url());
        try (TopologyHarness topology = new TopologyHarness(avroConfig(registry.url()), gateway)) {
            topology.send(RUN, responseStart("turn-1", "anthropic"));
            topology.send(RUN, itemStart("msg", "message"));
            topology.send(RUN, delta("msg", "first"));

            // a plain JSON delta for the open item: on JSON the DeltaReader would take it
            byte[] jsonDelta = Events.rawDelta(RUN, "msg", " (json)").getBytes(StandardCharsets.UTF_8);
            byte[] unknownSchema = {AvroWireFormat.MAGIC_BYTE, 0, 0, 0x30, 0x39, 2, 'x'};
            byte[] tooShort = {AvroWireFormat.MAGIC_BYTE, 0};
            byte[] avroDelta = gateway.write(TOPICS.rawEvents(),
                    StreamEvent.of("e-1", 0, RUN, delta("msg", "truncated on the way")));
            byte[] truncated = Arrays.copyOf(avroDelta, avroDelta.length - 12);
            topology.sendRaw(RUN, jsonDelta);
            topology.sendRaw(RUN, unknownSchema);
            topology.sendRaw(RUN, tooShort);
            topology.sendRaw(RUN, truncated);

            topology.send(RUN, delta("msg", ", second"));
            topology.send(RUN, done("msg"));
            topology.send(RUN, responseDone(ResponseStatus.COMPLETE));

            List<DeadLetter> letters = topology.deadLetters();
            assertThat(letters).extracting(DeadLetter::key).containsOnly(RUN);
            assertThat(letters).extracting(DeadLetter::bytes).containsExactly(jsonDelta, unknownSchema, tooShort, truncated);
            assertThat(letters).extracting(DeadLetter::reason).satisfiesExactly(
                    reason -> assertThat(reason).isEqualTo("unparseable StreamEvent: not Confluent Avro: first byte is 123, "
                            + "not the magic byte 0 (the record looks like JSON: is the producer on turnstream.serde.format=json?)"),
                    reason -> assertThat(reason).isEqualTo("unparseable StreamEvent: schema id 12345 is unknown to the schema registry"),
                    reason -> assertThat(reason).isEqualTo("unparseable StreamEvent: not Confluent Avro: 2 bytes, "
                            + "shorter than the 5-byte header"),
                    reason -> assertThat(reason).startsWith("unparseable StreamEvent: not Avro binary of io.turnstream.avro.StreamEvent"));
            assertThat(topology.deadLetterTotal()).isEqualTo(4.0);
            assertThat(topology.emitted()).containsExactly(
                    "turn_started",
                    "message created v1 origin=agent \"first\"",
                    "message completed v2 origin=agent \"first, second\"",
                    "turn_completed complete");
        }
    }

    @Test
    void aRecordNamingASchemaIdThatIsNotAvroIsDeadLetteredWithItsReasonWhileTheTurnCarriesOn() {
        // ids the registry answers for, but not with Avro: its state is fine, the records are not
        int protobuf = registry.storeAsIs("PROTOBUF", "syntax = \"proto3\"; message Turn { string id = 1; }");
        int invalid = registry.storeAsIs("AVRO", "{\"type\":\"record\",\"name\":\"Broken\"}");
        try (TopologyHarness topology = new TopologyHarness(avroConfig(registry.url()), avro(registry.url()))) {
            topology.send(RUN, responseStart("turn-1", "anthropic"));
            topology.send(RUN, itemStart("msg", "message"));
            byte[] namingProtobuf = namingSchemaId(protobuf);
            byte[] namingInvalid = namingSchemaId(invalid);
            topology.sendRaw(RUN, namingProtobuf);
            topology.sendRaw(RUN, namingInvalid);
            // a second time: nothing is remembered wrongly about the ids
            topology.sendRaw(RUN, namingProtobuf);
            topology.send(RUN, delta("msg", "still here"));
            topology.send(RUN, done("msg"));
            topology.send(RUN, responseDone(ResponseStatus.COMPLETE));

            List<DeadLetter> letters = topology.deadLetters();
            assertThat(letters).extracting(DeadLetter::bytes).containsExactly(namingProtobuf, namingInvalid, namingProtobuf);
            assertThat(letters).extracting(DeadLetter::reason).satisfiesExactly(
                    reason -> assertThat(reason).isEqualTo("unparseable StreamEvent: schema id " + protobuf
                            + " is a PROTOBUF schema, not Avro"),
                    reason -> assertThat(reason).startsWith("unparseable StreamEvent: schema id " + invalid
                            + " is not a valid Avro schema: "),
                    reason -> assertThat(reason).isEqualTo("unparseable StreamEvent: schema id " + protobuf
                            + " is a PROTOBUF schema, not Avro"));
            assertThat(topology.emitted()).containsExactly(
                    "turn_started",
                    "message created v1 origin=agent \"still here\"",
                    "message completed v2 origin=agent \"still here\"",
                    "turn_completed complete");
        }
    }

    @Test
    void anAvroRecordOnAJsonTopologyIsDeadLetteredWithItsReason() {
        byte[] avroStart = avro(registry.url()).write(TOPICS.rawEvents(),
                StreamEvent.of("e-1", 0, RUN, responseStart("turn-1", "anthropic")));
        try (TopologyHarness topology = new TopologyHarness()) {
            topology.sendRaw(RUN, avroStart);

            assertThat(topology.deadLetters()).singleElement().satisfies(letter -> {
                assertThat(letter.bytes()).isEqualTo(avroStart);
                assertThat(letter.reason()).startsWith("unparseable StreamEvent: not JSON: the first byte is 0, the magic "
                        + "byte of Confluent Avro (is the producer on turnstream.serde.format=avro?): ");
            });
            assertThat(topology.upserts()).isEmpty();
        }
    }

    @Test
    void aSchemaRegistryThatCannotBeReachedFailsTheTaskAndDeadLettersNothing() throws IOException {
        WireFormat gateway = avro(registry.url());
        try (TopologyHarness topology = new TopologyHarness(avroConfig("http://127.0.0.1:" + unusedPort()), gateway)) {
            // the topology has never seen the schema id the gateway registered: it must ask the registry
            assertThatThrownBy(() -> topology.send(RUN, responseStart("turn-1", "anthropic")))
                    .satisfies(failure -> assertThat(causes(failure))
                            .anySatisfy(cause -> assertThat(cause).isInstanceOf(SchemaRegistryException.class)
                                    .hasMessageContaining("cannot be reached")));
            assertThat(topology.deadLetters()).isEmpty();
            assertThat(topology.deadLetterTotal()).isZero();
        }
    }

    private static void messageAndToolCall(TopologyHarness topology) {
        topology.send(new StreamEvent("e-start", 0, new TraceContext(TRACEPARENT, null).toJson(), RUN, "response_start",
                responseStart("turn-1", "anthropic")));
        topology.send(RUN, itemStart("msg", "message"));
        topology.send(RUN, delta("msg", "The weather in Paris "));
        topology.send(RUN, delta("msg", "is sunny "));
        topology.advanceWallClock(TICK);
        topology.send(RUN, functionCallStart("fc", "get_weather", "call-1"));
        topology.send(RUN, delta("fc", "{\"city\":"));
        topology.send(RUN, delta("msg", "and warm today, "));
        topology.advanceWallClock(TICK);
        topology.send(RUN, delta("fc", "\"Paris\"}"));
        topology.send(RUN, done("fc"));
        topology.send(RUN, delta("msg", "with a light "));
        // past the batch timeout: the message's unemitted text is emitted below the next threshold
        topology.advanceWallClock(Duration.ofMillis(TopologyConfig.DEFAULT_BATCH_TIMEOUT_MS + 100));
        topology.send(RUN, delta("msg", "breeze."));
        topology.send(RUN, done("msg"));
        topology.send(RUN, responseDone(ResponseStatus.COMPLETE));
    }

    private static void toolResultWithdrawalAndFailure(TopologyHarness topology) {
        topology.send(RUN, responseStart("turn-2", "openai"));
        topology.send(RUN, functionCallStart("fc", "grep", "call-7"));
        topology.send(RUN, functionCallDone("fc", "grep", "{\"pattern\":\"TODO\"}", "call-7"));
        topology.send(RUN, itemStart("out", "function_call_output"));
        topology.send(RUN, functionOutputDone("out", "call-7", "3 matches", true));
        topology.send(RUN, itemStart("rs", "reasoning"));
        topology.send(RUN, delta("rs", "draft"));
        topology.advanceWallClock(Duration.ofMillis(TopologyConfig.DEFAULT_BATCH_TIMEOUT_MS + 100));
        topology.send(RUN, withdrawn("rs"));
        topology.send(RUN, itemStart("msg", "message"));
        topology.send(RUN, delta("msg", "Sorry"));
        topology.advanceWallClock(Duration.ofMillis(TopologyConfig.DEFAULT_BATCH_TIMEOUT_MS + 100));
        topology.send(RUN, itemError("msg", "overloaded", "try later"));
        topology.send(RUN, responseError("provider_error", "stream broke"));
    }

    /**
     * Runs a scenario on JSON and on Avro, each on a fresh topology, asserts that both left the same records, and
     * returns the JSON run's for the test's own assertions.
     */
    private Outputs onJsonAndAvro(Consumer<TopologyHarness> scenario) {
        Outputs json = run(WireFormat.JSON, scenario);
        assertSameOutputs(run(avro(registry.url()), scenario), json);
        return json;
    }

    /** Runs a scenario on a fresh topology in {@code format} and collects every output. */
    private Outputs run(WireFormat format, Consumer<TopologyHarness> scenario) {
        TopologyConfig config = format == WireFormat.JSON ? TopologyConfig.defaults() : avroConfig(registry.url());
        try (TopologyHarness topology = new TopologyHarness(config, format)) {
            scenario.accept(topology);
            List<TestRecord<String, byte[]>> records = topology.upsertRecords();
            if (format != WireFormat.JSON) {
                assertThat(records).as("Avro in the Confluent framing").allSatisfy(r ->
                        assertThat(r.value()[0]).isEqualTo(AvroWireFormat.MAGIC_BYTE));
            }
            List<UpsertEnvelope> upserts = records.stream()
                    .map(r -> topology.decode(TOPICS.upserts(), r.value(), UpsertEnvelope.class)).toList();
            List<String> traceparents = records.stream().map(r -> r.headers().lastHeader(TraceContext.TRACEPARENT))
                    .map(h -> h == null ? "none" : new String(h.value(), StandardCharsets.UTF_8)).toList();
            return new Outputs(upserts, traceparents, Map.copyOf(topology.itemState()), topology.toolCalls(),
                    topology.appends(), topology.deadLetters());
        }
    }

    /** Field for field: the decoded records of both runs are equal, and each Avro topic has its own subject. */
    private void assertSameOutputs(Outputs avro, Outputs json) {
        assertThat(avro.upserts()).isEqualTo(json.upserts());
        assertThat(avro.upserts()).map(UpsertEnvelope::payload).filteredOn(UIUpsert.class::isInstance).isNotEmpty();
        assertThat(avro.traceparents()).isEqualTo(json.traceparents());
        assertThat(avro.itemState()).isEqualTo(json.itemState()).isNotEmpty();
        assertThat(avro.toolCalls()).isEqualTo(json.toolCalls()).isNotEmpty();
        assertThat(avro.appends()).isEqualTo(json.appends());
        assertThat(avro.deadLetters()).isEmpty();
        SchemaRegistryClient client = new SchemaRegistryClient(registry.url(), null);
        assertThat(client.lookup(AvroWireFormat.subject(TOPICS.upserts()), AvroSchemas.of(UpsertEnvelope.class)))
                .isEqualTo(client.lookup(AvroWireFormat.subject(TOPICS.itemState()), AvroSchemas.of(UpsertEnvelope.class)));
        assertThat(client.lookup(AvroWireFormat.subject(TOPICS.toolCalls()), AvroSchemas.of(ToolCall.class))).isPositive();
    }

    private static WireFormat avro(String registryUrl) {
        return WireFormats.from(avroSettings(registryUrl));
    }

    private static TopologyConfig avroConfig(String registryUrl) {
        return TopologyConfig.from(avroSettings(registryUrl));
    }

    private static Settings avroSettings(String registryUrl) {
        Properties props = new Properties();
        props.setProperty(WireFormats.FORMAT_CONFIG, "avro");
        props.setProperty(SchemaRegistryClient.URL_CONFIG, registryUrl);
        return Settings.of(props);
    }

    /** A record in the Confluent framing that names this schema id, with a byte of body. */
    private static byte[] namingSchemaId(int id) {
        return ByteBuffer.allocate(6).put(AvroWireFormat.MAGIC_BYTE).putInt(id).put((byte) 2).array();
    }

    private static List<Throwable> causes(Throwable failure) {
        List<Throwable> chain = new ArrayList<>();
        for (Throwable t = failure; t != null && !chain.contains(t); t = t.getCause()) {
            chain.add(t);
        }
        return chain;
    }

    private static int unusedPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
