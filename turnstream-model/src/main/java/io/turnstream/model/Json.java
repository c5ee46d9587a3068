package io.turnstream.model;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.TextNode;
import java.io.IOException;
import java.io.UncheckedIOException;

/** The one JSON mapper of the project: exact field names from the records, unknown fields ignored, absent optionals omitted. */
public final class Json {

    public static final ObjectMapper MAPPER = JsonMapper.builder()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .serializationInclusion(JsonInclude.Include.NON_NULL)
            .build();

    /**
     * A reader bound to each type read with {@link #fromBytes}: {@code MAPPER.readValue} resolves the type and
     * its root deserializer on every call (profiled: a visible part of reading each raw event in the topology).
     */
    private static final ClassValue<ObjectReader> READERS = new ClassValue<>() {
        @Override
        protected ObjectReader computeValue(Class<?> type) {
            return MAPPER.readerFor(type);
        }
    };

    private Json() {
    }

    public static byte[] toBytes(Object value) {
        try {
            return MAPPER.writeValueAsBytes(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialise " + value.getClass().getSimpleName(), e);
        }
    }

    public static String toString(Object value) {
        try {
            return MAPPER.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialise " + value.getClass().getSimpleName(), e);
        }
    }

    /** Parses bytes into a record; throws {@link IOException} with Jackson's message when they are not one. */
    public static <T> T fromBytes(byte[] bytes, Class<T> type) throws IOException {
        return READERS.get(type).readValue(bytes);
    }

    public static <T> T fromString(String text, Class<T> type) {
        try {
            return MAPPER.readValue(text, type);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Tool arguments and outputs arrive as JSON text from providers. Parsed JSON when the text is
     * a JSON object or array, otherwise the raw text, so nothing the model said is lost.
     */
    public static JsonNode parseOrText(JsonNode value) {
        if (value == null || !value.isTextual()) {
            return value;
        }
        String text = value.asText();
        String trimmed = text.strip();
        if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
            try {
                return MAPPER.readTree(trimmed);
            } catch (IOException notJson) {
                return value;
            }
        }
        return value;
    }

    public static JsonNode parseOrText(String text) {
        return text == null ? null : parseOrText(TextNode.valueOf(text));
    }

    /** The text form of a value that may be JSON text or structured JSON. */
    public static String asText(JsonNode value) {
        if (value == null || value.isNull()) {
            return null;
        }
        return value.isTextual() ? value.asText() : value.toString();
    }
}
