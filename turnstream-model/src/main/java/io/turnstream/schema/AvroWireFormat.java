package io.turnstream.schema;

import io.turnstream.model.WireFormat;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.apache.avro.Schema;

/**
 * The Confluent wire format: magic byte 0, the writer schema's 4-byte big-endian registry id, then
 * Avro binary. Schemas live under the subject {@code <topic>-value} (TopicNameStrategy), so
 * Confluent's {@code KafkaAvroDeserializer} and any registry-aware client read what we write, and we
 * read what they write with any schema our own one can resolve.
 */
public final class AvroWireFormat implements WireFormat {

    public static final byte MAGIC_BYTE = 0;
    private static final int HEADER_BYTES = 5;

    private final SchemaRegistryClient registry;
    private final boolean autoRegister;

    /**
     * @param autoRegister register our schema under the subject on first write; when false the
     *                     schema must already be registered (governed registries), and is looked up
     */
    public AvroWireFormat(SchemaRegistryClient registry, boolean autoRegister) {
        this.registry = registry;
        this.autoRegister = autoRegister;
    }

    /** The registry subject of a topic's values. */
    public static String subject(String topic) {
        return topic + "-value";
    }

    @Override
    public byte[] write(String topic, Object value) {
        Schema schema = AvroSchemas.of(value.getClass());
        int id = autoRegister ? registry.register(subject(topic), schema) : registry.lookup(subject(topic), schema);
        byte[] body = AvroCodec.encode(value, schema);
        return ByteBuffer.allocate(HEADER_BYTES + body.length).put(MAGIC_BYTE).putInt(id).put(body).array();
    }

    @Override
    public <T> T read(String topic, byte[] bytes, Class<T> type) throws IOException {
        if (bytes == null || bytes.length < HEADER_BYTES) {
            throw new IOException("not Confluent Avro: " + (bytes == null ? "no value" : bytes.length + " bytes")
                    + ", shorter than the 5-byte header");
        }
        if (bytes[0] != MAGIC_BYTE) {
            throw new IOException("not Confluent Avro: first byte is " + bytes[0] + ", not the magic byte 0"
                    + (bytes[0] == '{' ? " (the record looks like JSON: is the producer on turnstream.serde.format=json?)" : ""));
        }
        int id = ByteBuffer.wrap(bytes, 1, 4).getInt();
        Schema writer = registry.schemaById(id);
        return AvroCodec.decode(bytes, HEADER_BYTES, bytes.length - HEADER_BYTES, writer, AvroSchemas.of(type), type);
    }
}
