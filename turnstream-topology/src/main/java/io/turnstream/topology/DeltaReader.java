package io.turnstream.topology;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.turnstream.model.Json;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.StreamPayload.ItemDelta;
import java.io.IOException;
import java.util.function.ToIntFunction;

/**
 * Reads a JSON {@code item_delta} raw event with Jackson's streaming parser, without data binding: deltas
 * are the bulk of every stream, and binding each to the event's records (the creator machinery, the
 * polymorphic payload) was most of what the topology paid to read a raw event in the flood's profile.
 *
 * <p>It returns what {@link Json#fromBytes} returns for the same bytes, or null when they are anything but
 * a delta of the plain shape: a JSON object with {@code event_id}, {@code run_id} and {@code type} (strings
 * or null), {@code timestamp} (an integer), {@code trace_context} (an object of strings) and {@code payload}
 * (an object of {@code type} {@code "item_delta"}, {@code item_id} and {@code delta_content}, strings or
 * null), in any order, each at most once; other fields are skipped, as the full read ignores them. On
 * null the caller reads the bytes in full, so every other event and every odd one (a repeated field, a
 * value of another kind, malformed JSON, trailing content) is read, and dead-lettered, as before.
 */
final class DeltaReader {

    /** The mapper's own factory: the same parser features and limits as the full read. */
    private static final JsonFactory FACTORY = Json.MAPPER.getFactory();

    private static final int EVENT_ID = 1;
    private static final int TIMESTAMP = 1 << 1;
    private static final int TRACE_CONTEXT = 1 << 2;
    private static final int RUN_ID = 1 << 3;
    private static final int TYPE = 1 << 4;
    private static final int PAYLOAD = 1 << 5;
    private static final int ITEM_ID = 1 << 6;
    private static final int DELTA_CONTENT = 1 << 7;
    /** The fields whose values are strings or null. */
    private static final int TEXTS = EVENT_ID | RUN_ID | TYPE | ITEM_ID | DELTA_CONTENT;
    /** What {@link #nextField} returns at the object's end, and for a field seen before. */
    private static final int END = -1;
    private static final int REPEATED = -2;

    private DeltaReader() {
    }

    /** The delta these bytes hold, as the full read gives it; null when they are not a plain delta (see above). */
    static StreamEvent read(byte[] bytes) {
        if (bytes == null || bytes.length == 0) {
            return null;
        }
        try (JsonParser parser = FACTORY.createParser(bytes)) {
            return event(parser);
        } catch (IOException malformed) {
            // the full read fails too, with the reason the dead letter carries
            return null;
        }
    }

    private static StreamEvent event(JsonParser parser) throws IOException {
        if (parser.nextToken() != JsonToken.START_OBJECT) {
            return null;
        }
        String eventId = null;
        long timestamp = 0;
        ObjectNode traceContext = null;
        String runId = null;
        String type = null;
        ItemDelta payload = null;
        int seen = 0;
        for (int field = nextField(parser, DeltaReader::eventField, seen); field != END;
                field = nextField(parser, DeltaReader::eventField, seen)) {
            if (field == REPEATED) {
                return null;
            }
            seen |= field;
            JsonToken value = parser.currentToken();
            if ((field & TEXTS) != 0 && !isTextOrNull(value)) {
                return null;
            }
            switch (field) {
                case EVENT_ID -> eventId = text(parser);
                case TIMESTAMP -> {
                    if (value != JsonToken.VALUE_NUMBER_INT || parser.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
                        return null;
                    }
                    timestamp = parser.getLongValue();
                }
                case TRACE_CONTEXT -> {
                    traceContext = value == JsonToken.START_OBJECT ? stringsObject(parser) : null;
                    if (traceContext == null) {
                        return null;
                    }
                }
                case RUN_ID -> runId = text(parser);
                case TYPE -> {
                    type = text(parser);
                    if (type != null && !type.equals(StreamPayload.ITEM_DELTA)) {
                        return null;
                    }
                }
                default -> {
                    payload = value == JsonToken.START_OBJECT ? delta(parser) : null;
                    if (payload == null) {
                        return null;
                    }
                }
            }
        }
        if (payload == null || parser.currentToken() != JsonToken.END_OBJECT || parser.nextToken() != null) {
            return null;
        }
        return new StreamEvent(eventId, timestamp, traceContext, runId, type, payload);
    }

    /** The payload object the parser is at, when it is an {@code item_delta} of the plain shape; else null. */
    private static ItemDelta delta(JsonParser parser) throws IOException {
        boolean typed = false;
        String itemId = null;
        String deltaContent = null;
        int seen = 0;
        for (int field = nextField(parser, DeltaReader::payloadField, seen); field != END;
                field = nextField(parser, DeltaReader::payloadField, seen)) {
            if (field == REPEATED) {
                return null;
            }
            seen |= field;
            JsonToken value = parser.currentToken();
            if (!isTextOrNull(value)) {
                return null;
            }
            if (field == TYPE) {
                // the subtype's discriminator: a string, and the only one read here
                if (value != JsonToken.VALUE_STRING || !StreamPayload.ITEM_DELTA.equals(parser.getText())) {
                    return null;
                }
                typed = true;
            } else if (field == ITEM_ID) {
                itemId = text(parser);
            } else {
                deltaContent = text(parser);
            }
        }
        return typed ? new ItemDelta(itemId, deltaContent) : null;
    }

    /**
     * Moves to the value of the object's next field that {@code fields} knows (its bit), skipping the others
     * as the full read ignores them; {@link #END} at the object's end, {@link #REPEATED} when already {@code seen}.
     */
    private static int nextField(JsonParser parser, ToIntFunction<String> fields, int seen) throws IOException {
        for (String name = parser.nextFieldName(); name != null; name = parser.nextFieldName()) {
            parser.nextToken();
            int field = fields.applyAsInt(name);
            if (field != 0) {
                return (seen & field) != 0 ? REPEATED : field;
            }
            parser.skipChildren();
        }
        return END;
    }

    private static int eventField(String name) {
        return switch (name) {
            case "event_id" -> EVENT_ID;
            case "timestamp" -> TIMESTAMP;
            case "trace_context" -> TRACE_CONTEXT;
            case "run_id" -> RUN_ID;
            case "type" -> TYPE;
            case "payload" -> PAYLOAD;
            default -> 0;
        };
    }

    private static int payloadField(String name) {
        return switch (name) {
            case "type" -> TYPE;
            case "item_id" -> ITEM_ID;
            case "delta_content" -> DELTA_CONTENT;
            default -> 0;
        };
    }

    /** The object the parser is at, when its values are all strings and its names all distinct; else null. */
    private static ObjectNode stringsObject(JsonParser parser) throws IOException {
        ObjectNode object = Json.MAPPER.getNodeFactory().objectNode();
        for (String name = parser.nextFieldName(); name != null; name = parser.nextFieldName()) {
            if (parser.nextToken() != JsonToken.VALUE_STRING || object.has(name)) {
                return null;
            }
            object.put(name, parser.getText());
        }
        return object;
    }

    private static boolean isTextOrNull(JsonToken token) {
        return token == JsonToken.VALUE_STRING || token == JsonToken.VALUE_NULL;
    }

    /** The string or null at the parser ({@code getText()} of a JSON null is the text "null"). */
    private static String text(JsonParser parser) throws IOException {
        return parser.currentToken() == JsonToken.VALUE_NULL ? null : parser.getText();
    }
}
