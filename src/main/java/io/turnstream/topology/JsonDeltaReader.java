package io.turnstream.topology;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import io.turnstream.model.Json;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import java.io.IOException;

/**
 * Reads the topology's most frequent input, a JSON {@code item_delta} event, with Jackson's streaming
 * parser instead of data binding (profiling showed the bound read of every delta among the hot
 * path's largest costs). Only the plain shape is read here: the fields of {@link StreamEvent} with
 * string, integer or null values ({@code trace_context} as a tree, as bound), and a payload of {@code type}, {@code item_id} and
 * {@code delta_content}. Anything else, every other event type and every malformed input included,
 * gives null, and the caller reads it with the full reader, which also reports its errors. Where both
 * read an input, they give the same event.
 */
final class JsonDeltaReader {

    private static final JsonFactory FACTORY = Json.MAPPER.getFactory();

    private JsonDeltaReader() {
    }

    /** The event, or null when it is not a plain JSON item_delta. */
    static StreamEvent read(byte[] bytes) {
        try (JsonParser parser = FACTORY.createParser(bytes)) {
            expect(parser.nextToken() == JsonToken.START_OBJECT);
            String eventId = null;
            long timestamp = 0;
            String runId = null;
            String type = null;
            JsonNode traceContext = null;
            StreamPayload.ItemDelta delta = null;
            while (parser.nextToken() == JsonToken.FIELD_NAME) {
                String field = parser.currentName();
                JsonToken value = parser.nextToken();
                switch (field) {
                    case "event_id" -> eventId = stringOrNull(parser, value);
                    case "run_id" -> runId = stringOrNull(parser, value);
                    case "type" -> type = stringOrNull(parser, value);
                    case "timestamp" -> {
                        expect(value == JsonToken.VALUE_NUMBER_INT && parser.getNumberType() != JsonParser.NumberType.BIG_INTEGER);
                        timestamp = parser.getLongValue();
                    }
                    case "trace_context" -> traceContext = value == JsonToken.VALUE_NULL ? NullNode.getInstance()
                            : parser.readValueAsTree();
                    case "payload" -> delta = payload(parser, value);
                    default -> throw NotPlain.INSTANCE;
                }
            }
            expect(parser.currentToken() == JsonToken.END_OBJECT && parser.nextToken() == null && delta != null);
            return new StreamEvent(eventId, timestamp, traceContext, runId, type, delta);
        } catch (IOException | NotPlain e) {
            return null;
        }
    }

    private static StreamPayload.ItemDelta payload(JsonParser parser, JsonToken value) throws IOException {
        expect(value == JsonToken.START_OBJECT);
        String type = null;
        String itemId = null;
        String deltaContent = null;
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
            String field = parser.currentName();
            JsonToken token = parser.nextToken();
            switch (field) {
                case "type" -> type = stringOrNull(parser, token);
                case "item_id" -> itemId = stringOrNull(parser, token);
                case "delta_content" -> deltaContent = stringOrNull(parser, token);
                default -> throw NotPlain.INSTANCE;
            }
        }
        expect(StreamPayload.ITEM_DELTA.equals(type));
        return new StreamPayload.ItemDelta(itemId, deltaContent);
    }

    private static String stringOrNull(JsonParser parser, JsonToken value) throws IOException {
        expect(value == JsonToken.VALUE_STRING || value == JsonToken.VALUE_NULL);
        return value == JsonToken.VALUE_NULL ? null : parser.getText();
    }

    private static void expect(boolean plain) {
        if (!plain) {
            throw NotPlain.INSTANCE;
        }
    }

    /** The input is not a plain item_delta: left to the full reader. */
    private static final class NotPlain extends RuntimeException {
        static final NotPlain INSTANCE = new NotPlain();

        private NotPlain() {
            super(null, null, false, false);
        }
    }
}
