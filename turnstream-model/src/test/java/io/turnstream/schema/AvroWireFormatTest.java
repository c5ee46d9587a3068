package io.turnstream.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.turnstream.model.ControlMessage;
import io.turnstream.model.Json;
import io.turnstream.model.ToolCall;
import io.turnstream.model.UpsertEnvelope;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.Settings;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.util.Properties;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class AvroWireFormatTest {

    private static final String TOPIC = "llm.upserts";

    private FakeSchemaRegistry registry;

    @BeforeEach
    void startRegistry() throws IOException {
        registry = FakeSchemaRegistry.start();
    }

    @AfterEach
    void stopRegistry() {
        registry.close();
    }

    @Test
    void writesTheConfluentWireFormatThatAnyRegistryClientReads() throws Exception {
        UpsertEnvelope envelope = ContractSamples.upsertEnvelopes().get(1);

        byte[] bytes = avro().write(TOPIC, envelope);

        ByteBuffer frame = ByteBuffer.wrap(bytes);
        assertThat(frame.get()).as("magic byte").isZero();
        int id = frame.getInt();
        assertThat(id).isEqualTo(registry.register("llm.upserts-value", AvroSchemas.of(UpsertEnvelope.class)));
        GenericRecord decoded = readAsAGenericRegistryClient(bytes, id);
        assertThat(decoded.get("turnId")).hasToString(envelope.turnId());
        assertThat(((GenericRecord) decoded.get("payload")).get("content")).hasToString("Hel");
    }

    @Test
    void everyRecordTypeRoundTripsThroughTheRegistry() throws IOException {
        WireFormat writer = avro();
        WireFormat freshReader = avro();

        for (Object record : ContractSamples.all()) {
            byte[] bytes = writer.write("topic-of-" + record.getClass().getSimpleName(), record);
            assertThat(freshReader.read("topic-of-" + record.getClass().getSimpleName(), bytes, record.getClass()))
                    .isEqualTo(record);
        }
    }

    @Test
    void registersOnceAndFetchesEachSchemaOnceThanksToTheCache() throws IOException {
        WireFormat writer = avro();
        WireFormat reader = avro();

        for (UpsertEnvelope envelope : ContractSamples.upsertEnvelopes()) {
            reader.read(TOPIC, writer.write(TOPIC, envelope), UpsertEnvelope.class);
        }

        assertThat(registry.requests("register")).isEqualTo(1);
        assertThat(registry.requests("byId")).isEqualTo(1);
    }

    @Test
    void readsRecordsOfANewerProducerWhoseSchemaAddedAField() throws IOException {
        Schema newer = new Schema.Parser().parse(AvroSchemas.of(ControlMessage.class).toString().replace("\"fields\":[",
                "\"fields\":[{\"name\":\"requestedBy\",\"type\":[\"null\",\"string\"],\"default\":null},"));
        int id = registry.register("llm.control-value", newer);
        GenericRecord record = new GenericData.Record(newer);
        record.put("requestedBy", "ops");
        record.put("type", "cancel");
        record.put("turnId", "turn-9");
        record.put("reason", "stuck");

        ControlMessage read = avro().read("llm.control", confluentFrame(id, newer, record), ControlMessage.class);

        assertThat(read).isEqualTo(ControlMessage.cancel("turn-9", "stuck"));
    }

    @Test
    void withoutAutoRegistrationTheSchemaMustAlreadyBeRegistered() {
        WireFormat governed = WireFormats.from(settings("avro").with("auto.register.schemas", "false"));
        ToolCall call = ContractSamples.toolCalls().get(0);

        assertThatThrownBy(() -> governed.write("llm.tool-calls", call))
                .isInstanceOf(SchemaRegistryException.class)
                .hasMessageContaining("error_code 40401: Subject 'llm.tool-calls-value' not found.");

        int id = registry.register("llm.tool-calls-value", AvroSchemas.of(ToolCall.class));
        assertThat(ByteBuffer.wrap(governed.write("llm.tool-calls", call), 1, 4).getInt()).isEqualTo(id);
        assertThat(registry.requests("register")).isZero();
    }

    @Test
    void anIncompatibleSubjectIsReportedWithTheRegistrysMessage() {
        registry.register("llm.control-value", new Schema.Parser().parse(
                "{\"type\":\"record\",\"name\":\"Other\",\"fields\":[{\"name\":\"n\",\"type\":\"long\"}]}"));

        assertThatThrownBy(() -> avro().write("llm.control", ControlMessage.cancel("turn-1", "x")))
                .isInstanceOf(SchemaRegistryException.class)
                .hasMessageContaining("HTTP 409")
                .hasMessageContaining("incompatible with an earlier schema for subject \"llm.control-value\"")
                .extracting(e -> ((SchemaRegistryException) e).errorCode()).isEqualTo(409);
    }

    @Test
    void bytesThatAreNotOursAreReadErrorsWithAReason() {
        WireFormat avro = avro();

        assertThatThrownBy(() -> avro.read(TOPIC, Json.toBytes(ContractSamples.upsertEnvelopes().get(0)), UpsertEnvelope.class))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("not the magic byte 0 (the record looks like JSON");
        assertThatThrownBy(() -> avro.read(TOPIC, new byte[] {0, 0, 0}, UpsertEnvelope.class))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("shorter than the 5-byte header");
        assertThatThrownBy(() -> avro.read(TOPIC, new byte[] {0, 0, 0, 0, 42, 1}, UpsertEnvelope.class))
                .isInstanceOf(UnreadableSchemaException.class)
                .hasMessage("schema id 42 is unknown to the schema registry");
        // and the other way round: Confluent Avro read as JSON
        byte[] avroBytes = avro.write(TOPIC, ContractSamples.upsertEnvelopes().get(0));
        assertThatThrownBy(() -> WireFormat.JSON.read(TOPIC, avroBytes, UpsertEnvelope.class))
                .isInstanceOf(IOException.class)
                .hasMessageStartingWith("not JSON: the first byte is 0, the magic byte of Confluent Avro (is the producer "
                        + "on turnstream.serde.format=avro?): ");
    }

    @Test
    void aSchemaIdWhoseSchemaIsNotAvroOrNotValidIsTheRecordsFaultNotTheRegistrys() {
        int protobuf = registry.storeAsIs("PROTOBUF", "syntax = \"proto3\"; message Turn { string id = 1; }");
        int invalid = registry.storeAsIs("AVRO", "{\"type\":\"record\",\"name\":\"Broken\"}");
        WireFormat avro = avro();

        assertThatThrownBy(() -> avro.read(TOPIC, new byte[] {0, 0, 0, 0, (byte) protobuf, 1}, UpsertEnvelope.class))
                .isInstanceOf(UnreadableSchemaException.class)
                .hasMessage("schema id " + protobuf + " is a PROTOBUF schema, not Avro");
        assertThatThrownBy(() -> avro.read(TOPIC, new byte[] {0, 0, 0, 0, (byte) invalid, 1}, UpsertEnvelope.class))
                .isInstanceOf(UnreadableSchemaException.class)
                .hasMessageStartingWith("schema id " + invalid + " is not a valid Avro schema: ");
    }

    @Test
    void aRegistryThatCannotBeReachedIsNotTheRecordsFaultWhenReading() {
        byte[] bytes = avro().write(TOPIC, ContractSamples.upsertEnvelopes().get(0));
        WireFormat unreachable = WireFormats.from(settings("avro")
                .with(SchemaRegistryClient.URL_CONFIG, "http://127.0.0.1:" + unusedPort()));

        // unchecked, not the IOException of a record that cannot be read: callers must not dead-letter it
        assertThatThrownBy(() -> unreachable.read(TOPIC, bytes, UpsertEnvelope.class))
                .isInstanceOf(SchemaRegistryException.class)
                .hasMessageContaining("cannot be reached");
    }

    @Test
    void sendsBasicAuthCredentialsWhenConfigured() throws IOException {
        try (FakeSchemaRegistry secured = FakeSchemaRegistry.requiringBasicAuth("svc:s3cret")) {
            Settings base = Settings.of(new Properties()).with(WireFormats.FORMAT_CONFIG, "avro")
                    .with(SchemaRegistryClient.URL_CONFIG, secured.url());

            assertThatThrownBy(() -> WireFormats.from(base).write(TOPIC, ContractSamples.upsertEnvelopes().get(0)))
                    .isInstanceOf(SchemaRegistryException.class)
                    .hasMessageContaining("HTTP 401")
                    .hasMessageNotContaining("s3cret");
            WireFormat authenticated = WireFormats.from(base.with(SchemaRegistryClient.BASIC_AUTH_USER_INFO_CONFIG, "svc:s3cret"));
            assertThat(authenticated.read(TOPIC, authenticated.write(TOPIC, ContractSamples.upsertEnvelopes().get(0)),
                    UpsertEnvelope.class)).isEqualTo(ContractSamples.upsertEnvelopes().get(0));
        }
    }

    @Test
    void failsOverToTheNextRegistryUrlAndNamesThemAllWhenNoneAnswers() {
        String deadUrl = "http://127.0.0.1:" + unusedPort();
        WireFormat failingOver = WireFormats.from(settings("avro").with(SchemaRegistryClient.URL_CONFIG, deadUrl + "," + registry.url()));
        assertThat(failingOver.write(TOPIC, ContractSamples.upsertEnvelopes().get(0))).startsWith(0);

        WireFormat unreachable = WireFormats.from(settings("avro").with(SchemaRegistryClient.URL_CONFIG, deadUrl));
        assertThatThrownBy(() -> unreachable.write(TOPIC, ContractSamples.upsertEnvelopes().get(0)))
                .isInstanceOf(SchemaRegistryException.class)
                .hasMessageContaining(deadUrl)
                .hasMessageContaining("cannot be reached");
    }

    @Test
    void theFormatComesFromSettingsWithJsonByDefault() {
        assertThat(WireFormats.from(Settings.of(new Properties()))).isSameAs(WireFormat.JSON);
        assertThat(WireFormats.from(settings("JSON"))).isSameAs(WireFormat.JSON);
        assertThat(WireFormats.from(settings("avro"))).isInstanceOf(AvroWireFormat.class);
        assertThatThrownBy(() -> WireFormats.from(Settings.of(new Properties()).with(WireFormats.FORMAT_CONFIG, "avro")))
                .hasMessage("turnstream.serde.format=avro needs schema.registry.url (for example http://localhost:8081)");
        assertThatThrownBy(() -> WireFormats.from(settings("protobuf")))
                .hasMessage("turnstream.serde.format must be json or avro, got 'protobuf'");
    }

    private Settings settings(String format) {
        return Settings.of(new Properties())
                .with(WireFormats.FORMAT_CONFIG, format)
                .with(SchemaRegistryClient.URL_CONFIG, registry.url());
    }

    private WireFormat avro() {
        return WireFormats.from(settings("avro"));
    }

    /** What Confluent's KafkaAvroDeserializer does: strip the header, fetch the writer schema by id, decode. */
    private GenericRecord readAsAGenericRegistryClient(byte[] bytes, int id) throws Exception {
        Schema writer = new SchemaRegistryClient(registry.url(), null).schemaById(id);
        return new GenericDatumReader<GenericRecord>(writer)
                .read(null, DecoderFactory.get().binaryDecoder(bytes, 5, bytes.length - 5, null));
    }

    private static byte[] confluentFrame(int id, Schema schema, GenericRecord record) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(0);
        out.write(ByteBuffer.allocate(4).putInt(id).array());
        BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(out, null);
        new GenericDatumWriter<GenericRecord>(schema).write(record, encoder);
        encoder.flush();
        return out.toByteArray();
    }

    private static int unusedPort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
