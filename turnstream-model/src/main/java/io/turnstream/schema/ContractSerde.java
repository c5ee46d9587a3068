package io.turnstream.schema;

import io.turnstream.model.WireFormat;
import io.turnstream.runtime.Settings;
import java.io.IOException;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;

/**
 * A Kafka {@link Serde} of one contract record type ({@code UpsertEnvelope}, {@code StreamEvent},
 * {@code ItemAppend}, ...) in the project's wire format, for applications that read or write
 * Turnstream topics with their own clients or Kafka Streams:
 *
 * <pre>{@code
 * builder.stream("llm.upserts", Consumed.with(Serdes.String(), ContractSerde.json(UpsertEnvelope.class)))
 * }</pre>
 *
 * JSON is UTF-8 with the contract's field names; Avro is the Confluent wire format (magic byte,
 * schema id, binary) with the schemas of {@code schemas/}, so Confluent's own serdes read what this
 * writes. A null record stays null (a tombstone); bytes that are not a record are a
 * {@link SerializationException} naming the reason.
 */
public final class ContractSerde<T> implements Serde<T>, Serializer<T>, Deserializer<T> {

    private final Class<T> type;
    private final WireFormat format;

    private ContractSerde(Class<T> type, WireFormat format) {
        this.type = type;
        this.format = format;
    }

    public static <T> ContractSerde<T> json(Class<T> type) {
        return of(type, WireFormat.JSON);
    }

    public static <T> ContractSerde<T> of(Class<T> type, WireFormat format) {
        return new ContractSerde<>(type, format);
    }

    /**
     * The format the configuration names, as every Turnstream service reads it:
     * {@code turnstream.serde.format} ({@code json} by default, or {@code avro} with
     * {@code schema.registry.url}, optional {@code basic.auth.user.info} and {@code auto.register.schemas}).
     */
    public static <T> ContractSerde<T> from(Class<T> type, Map<String, ?> configs) {
        Properties props = new Properties();
        configs.forEach((key, value) -> props.setProperty(key, String.valueOf(value)));
        return of(type, WireFormats.from(Settings.of(props)));
    }

    @Override
    public byte[] serialize(String topic, T data) {
        return data == null ? null : format.write(topic, data);
    }

    @Override
    public T deserialize(String topic, byte[] data) {
        if (data == null) {
            return null;
        }
        try {
            return format.read(topic, data, type);
        } catch (IOException e) {
            throw new SerializationException("not a " + type.getSimpleName() + " on " + topic + ": " + e.getMessage(), e);
        }
    }

    @Override
    public Serializer<T> serializer() {
        return this;
    }

    @Override
    public Deserializer<T> deserializer() {
        return this;
    }

    @Override
    public void configure(Map<String, ?> configs, boolean isKey) {
        // the format is chosen when the serde is made (json() or from(configs))
    }

    @Override
    public void close() {
    }
}
