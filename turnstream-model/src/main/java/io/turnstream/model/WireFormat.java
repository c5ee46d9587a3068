package io.turnstream.model;

import java.io.IOException;

/**
 * How contract records are encoded on a topic. JSON is the default; every producer and consumer of
 * the project goes through this interface so that a deployment can switch the encoding in one place.
 */
public interface WireFormat {

    byte[] write(String topic, Object value);

    /**
     * Decodes a record; throws {@link IOException} with a readable reason when the bytes are not one: the record's
     * fault, so dead-letter it. A failure of what the format depends on (on Avro, a schema registry that cannot be
     * reached: {@code io.turnstream.schema.SchemaRegistryException}) is unchecked and nobody's record's: fail and
     * read the record again later, never dead-letter it.
     */
    <T> T read(String topic, byte[] bytes, Class<T> type) throws IOException;

    /** UTF-8 JSON with the contract's field names, via {@link Json#MAPPER}. */
    WireFormat JSON = new WireFormat() {
        @Override
        public byte[] write(String topic, Object value) {
            return Json.toBytes(value);
        }

        @Override
        public <T> T read(String topic, byte[] bytes, Class<T> type) throws IOException {
            try {
                return Json.fromBytes(bytes, type);
            } catch (IOException e) {
                if (bytes != null && bytes.length > 0 && bytes[0] == 0) {
                    // Jackson reads a leading 0 as UTF-32 and names a character: say what the bytes more likely are
                    throw new IOException("not JSON: the first byte is 0, the magic byte of Confluent Avro (is the producer "
                            + "on turnstream.serde.format=avro?): " + e.getMessage(), e);
                }
                throw e;
            }
        }
    };
}
