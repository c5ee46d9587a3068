package io.turnstream.topology;

import com.fasterxml.jackson.annotation.JsonAutoDetect;
import com.fasterxml.jackson.annotation.PropertyAccessor;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;

/** JSON serde for the topology's own state records ({@link TurnState}, {@link ItemState}), by field. */
final class StateSerde {

    private static final ObjectMapper MAPPER = JsonMapper.builder()
            .visibility(PropertyAccessor.ALL, JsonAutoDetect.Visibility.NONE)
            .visibility(PropertyAccessor.FIELD, JsonAutoDetect.Visibility.ANY)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .build();

    private StateSerde() {
    }

    static <T> Serde<T> of(Class<T> type) {
        // bound to the type once: a state record is written with every emit and append
        ObjectWriter writer = MAPPER.writerFor(type);
        ObjectReader reader = MAPPER.readerFor(type);
        Serializer<T> serializer = (topic, value) -> {
            try {
                return value == null ? null : writer.writeValueAsBytes(value);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        };
        Deserializer<T> deserializer = (topic, bytes) -> {
            try {
                return bytes == null ? null : reader.readValue(bytes);
            } catch (IOException e) {
                throw new UncheckedIOException("corrupt " + type.getSimpleName() + " in state store", e);
            }
        };
        return Serdes.serdeFrom(serializer, deserializer);
    }
}
