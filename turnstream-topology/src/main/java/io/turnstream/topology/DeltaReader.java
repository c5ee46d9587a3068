package io.turnstream.topology;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.io.SerializedString;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.turnstream.model.Json;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.StreamPayload.ItemDelta;
import java.io.IOException;
import java.util.Arrays;

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
 *
 * <p>A delta in the writer's own compact form is read without a parser at all ({@link CompactDeltaScanner});
 * this parser reads what that declines. Each name is first matched against the one the project's writer puts next ({@code nextFieldName(SerializableString)}
 * compares the raw bytes), and {@code "item_delta"} is compared without making a string of it.
 */
final class DeltaReader {

    /** The mapper's own factory: the same parser features and limits as the full read. */
    private static final JsonFactory FACTORY = Json.MAPPER.getFactory();

    /** The event's fields, in the order the project's writer writes them (the record's); an index is a field's bit in {@code seen}. */
    private static final SerializedString[] EVENT_FIELDS = names("event_id", "timestamp", "trace_context", "run_id", "type",
            "payload");
    private static final int EVENT_ID = 0;
    private static final int TIMESTAMP = 1;
    private static final int TRACE_CONTEXT = 2;
    private static final int RUN_ID = 3;
    private static final int TYPE = 4;
    private static final int PAYLOAD = 5;
    /** The payload's fields, in the order the project's writer writes them: the type id first. */
    private static final SerializedString[] PAYLOAD_FIELDS = names("type", "item_id", "delta_content");
    private static final int PAYLOAD_TYPE = 0;
    private static final int ITEM_ID = 1;
    /** What {@link #nextField} returns at the object's end, and for a field seen before. */
    private static final int END = -1;
    private static final int REPEATED = -2;
    private static final char[] ITEM_DELTA = StreamPayload.ITEM_DELTA.toCharArray();

    private DeltaReader() {
    }

    /** The delta these bytes hold, as the full read gives it; null when they are not a plain delta (see above). */
    static StreamEvent read(byte[] bytes) {
        if (bytes == null || bytes.length == 0) {
            return null;
        }
        StreamEvent compact = CompactDeltaScanner.read(bytes);
        if (compact != null) {
            return compact;
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
        for (int field = nextField(parser, EVENT_FIELDS, 0, seen); field != END;
                field = nextField(parser, EVENT_FIELDS, field + 1, seen)) {
            if (field == REPEATED) {
                return null;
            }
            seen |= 1 << field;
            JsonToken value = parser.currentToken();
            switch (field) {
                case EVENT_ID, RUN_ID -> {
                    if (!isTextOrNull(value)) {
                        return null;
                    }
                    if (field == EVENT_ID) {
                        eventId = text(parser);
                    } else {
                        runId = text(parser);
                    }
                }
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
                case TYPE -> {
                    // null, or item_delta: another event's type needs the full read
                    if (value != JsonToken.VALUE_NULL && !isItemDelta(parser, value)) {
                        return null;
                    }
                    type = value == JsonToken.VALUE_NULL ? null : StreamPayload.ITEM_DELTA;
                }
                case PAYLOAD -> {
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
        for (int field = nextField(parser, PAYLOAD_FIELDS, 0, seen); field != END;
                field = nextField(parser, PAYLOAD_FIELDS, field + 1, seen)) {
            if (field == REPEATED) {
                return null;
            }
            seen |= 1 << field;
            JsonToken value = parser.currentToken();
            if (field == PAYLOAD_TYPE) {
                // the subtype's discriminator: a string, and the only one read here
                if (!isItemDelta(parser, value)) {
                    return null;
                }
                typed = true;
            } else if (!isTextOrNull(value)) {
                return null;
            } else if (field == ITEM_ID) {
                itemId = text(parser);
            } else {
                deltaContent = text(parser);
            }
        }
        return typed ? new ItemDelta(itemId, deltaContent) : null;
    }

    /**
     * Moves to the value of the object's next field among {@code fields} and returns its index, skipping the
     * others as the full read ignores them; {@link #END} at the object's end, {@link #REPEATED} when already
     * {@code seen}. The name at {@code expected} (the one after the field read last; from the first again past
     * the last) is tried first: a match of its bytes skips the name's lookup.
     */
    private static int nextField(JsonParser parser, SerializedString[] fields, int expected, int seen) throws IOException {
        while (true) {
            int field;
            if (parser.nextFieldName(fields[expected % fields.length])) {
                field = expected % fields.length;
            } else if (parser.currentToken() == JsonToken.FIELD_NAME) {
                field = indexOf(fields, parser.currentName());
            } else {
                return END;
            }
            parser.nextToken();
            if (field >= 0) {
                return (seen & (1 << field)) != 0 ? REPEATED : field;
            }
            parser.skipChildren();
        }
    }

    private static int indexOf(SerializedString[] fields, String name) {
        for (int i = 0; i < fields.length; i++) {
            if (fields[i].getValue().equals(name)) {
                return i;
            }
        }
        return -1;
    }

    private static SerializedString[] names(String... names) {
        return Arrays.stream(names).map(SerializedString::new).toArray(SerializedString[]::new);
    }

    /** Whether the value the parser is at is the string {@code "item_delta"}, compared without making a string of it. */
    private static boolean isItemDelta(JsonParser parser, JsonToken value) throws IOException {
        if (value != JsonToken.VALUE_STRING) {
            return false;
        }
        char[] text = parser.getTextCharacters();
        int offset = parser.getTextOffset();
        return Arrays.equals(text, offset, offset + parser.getTextLength(), ITEM_DELTA, 0, ITEM_DELTA.length);
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
