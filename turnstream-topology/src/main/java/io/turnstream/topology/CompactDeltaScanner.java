package io.turnstream.topology;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.turnstream.model.Json;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.StreamPayload.ItemDelta;
import java.nio.charset.StandardCharsets;

/**
 * Reads a JSON {@code item_delta} raw event in the exact form the project's writer ({@link Json#toBytes})
 * gives it, byte by byte and without a parser: creating a Jackson parser per record was about a tenth of the
 * topology's stream thread in the flood's profile (docs/benchmarks.md), and reading the event with it as much
 * again.
 *
 * <p>The form: no white space; the fields {@code event_id}, {@code timestamp}, {@code trace_context},
 * {@code run_id}, {@code type} and {@code payload} in that order, each but the payload left out when null;
 * the payload's {@code type}, {@code item_id} and {@code delta_content} in that order; {@code timestamp} a
 * plain integer of at most 18 digits, {@code trace_context} an object of distinct names and string values,
 * both types {@code "item_delta"}; strings of ASCII with JSON's escapes. It returns what {@link DeltaReader}
 * returns for the same bytes, or null for anything else (a byte beyond ASCII, any other order or field,
 * white space, trailing content), which {@link DeltaReader} then reads with the parser as before.
 */
final class CompactDeltaScanner {

    private static final byte[] ITEM_DELTA = ("\"" + StreamPayload.ITEM_DELTA + "\"").getBytes(StandardCharsets.US_ASCII);
    private static final byte[] EVENT_ID = name("event_id");
    private static final byte[] TIMESTAMP = name("timestamp");
    private static final byte[] TRACE_CONTEXT = name("trace_context");
    private static final byte[] RUN_ID = name("run_id");
    private static final byte[] TYPE = name("type");
    private static final byte[] PAYLOAD = name("payload");
    private static final byte[] ITEM_ID = name("item_id");
    private static final byte[] DELTA_CONTENT = name("delta_content");
    private static final byte[] NULL = "null".getBytes(StandardCharsets.US_ASCII);
    /** Longest integer taken: any 18-digit number fits a long. */
    private static final int MAX_DIGITS = 18;

    private final byte[] in;
    private int at;
    /** Whether the object being read has a field yet, so the next is preceded by a comma. */
    private boolean fieldRead;
    /** Whether a string was not in the writer's form (see {@link #quoted}): the whole read then returns null. */
    private boolean declined;

    private CompactDeltaScanner(byte[] in) {
        this.in = in;
    }

    /** The delta these bytes hold, as {@link DeltaReader} reads it; null when they are not in the writer's form. */
    static StreamEvent read(byte[] bytes) {
        return bytes == null ? null : new CompactDeltaScanner(bytes).event();
    }

    private StreamEvent event() {
        if (!literal('{')) {
            return null;
        }
        String eventId = null;
        long timestamp = 0;
        ObjectNode traceContext = null;
        String runId = null;
        String type = null;
        if (field(EVENT_ID) && (eventId = string()) == null && declined) {
            return null;
        }
        if (field(TIMESTAMP)) {
            int start = at;
            timestamp = integer();
            if (at == start) {
                return null;
            }
        }
        if (field(TRACE_CONTEXT) && (traceContext = stringsObject()) == null) {
            return null;
        }
        if (field(RUN_ID) && (runId = string()) == null && declined) {
            return null;
        }
        if (field(TYPE)) {
            if (!literal(ITEM_DELTA)) {
                return null;
            }
            type = StreamPayload.ITEM_DELTA;
        }
        if (!field(PAYLOAD)) {
            return null;
        }
        ItemDelta payload = payload();
        if (payload == null || !literal('}') || at != in.length) {
            return null;
        }
        return new StreamEvent(eventId, timestamp, traceContext, runId, type, payload);
    }

    private ItemDelta payload() {
        if (!literal('{')) {
            return null;
        }
        fieldRead = false;
        if (!field(TYPE) || !literal(ITEM_DELTA)) {
            return null;
        }
        String itemId = null;
        String deltaContent = null;
        if (field(ITEM_ID) && (itemId = string()) == null && declined) {
            return null;
        }
        if (field(DELTA_CONTENT) && (deltaContent = string()) == null && declined) {
            return null;
        }
        return literal('}') ? new ItemDelta(itemId, deltaContent) : null;
    }

    /** {@code {"name":"value",...}} with distinct names; null for anything else. */
    private ObjectNode stringsObject() {
        if (!literal('{')) {
            return null;
        }
        ObjectNode object = Json.MAPPER.getNodeFactory().objectNode();
        if (literal('}')) {
            return object;
        }
        do {
            String name = quoted();
            if (name == null || !literal(':') || object.has(name)) {
                return null;
            }
            String value = quoted();
            if (value == null) {
                return null;
            }
            object.put(name, value);
        } while (literal(','));
        return literal('}') ? object : null;
    }

    /**
     * Moves past the field's name (and the comma before it, after the object's first field) when it is next;
     * a field left out leaves the position where it was.
     */
    private boolean field(byte[] name) {
        int start = at;
        if (fieldRead && !literal(',')) {
            return false;
        }
        if (!literal(name)) {
            at = start;
            return false;
        }
        fieldRead = true;
        return true;
    }

    /** A string, or null for JSON's null and for anything else, which is {@link #declined}. */
    private String string() {
        if (literal(NULL)) {
            return null;
        }
        String text = quoted();
        return text != null ? text : decline();
    }

    /**
     * A quoted string of ASCII with JSON's escapes; null when there is none at the position, and null and
     * {@link #declined} when it holds a byte beyond ASCII, a control character or an escape JSON has not.
     */
    private String quoted() {
        if (!literal('"')) {
            return null;
        }
        int start = at;
        while (at < in.length) {
            byte b = in[at];
            if (b == '"') {
                at++;
                return new String(in, start, at - 1 - start, StandardCharsets.ISO_8859_1);
            }
            if (b == '\\') {
                return escaped(start);
            }
            if (b < 0x20) {
                // a control character, raw (the full read fails on it), or a byte beyond ASCII (negative)
                return decline();
            }
            at++;
        }
        return decline();
    }

    /** The rest of a string from its first escape on; what precedes it, from {@code start}, is plain. */
    private String escaped(int start) {
        StringBuilder text = new StringBuilder(in.length - start).append(new String(in, start, at - start,
                StandardCharsets.ISO_8859_1));
        while (at < in.length) {
            byte b = in[at++];
            if (b == '"') {
                return text.toString();
            }
            if (b < 0x20) {
                return decline();
            }
            if (b != '\\') {
                text.append((char) b);
                continue;
            }
            if (at >= in.length) {
                return decline();
            }
            switch (in[at++]) {
                case '"' -> text.append('"');
                case '\\' -> text.append('\\');
                case '/' -> text.append('/');
                case 'b' -> text.append('\b');
                case 'f' -> text.append('\f');
                case 'n' -> text.append('\n');
                case 'r' -> text.append('\r');
                case 't' -> text.append('\t');
                case 'u' -> {
                    int unit = hex4();
                    if (unit < 0) {
                        return decline();
                    }
                    text.append((char) unit);
                }
                default -> {
                    return decline();
                }
            }
        }
        return decline();
    }

    /** Marks the read declined; returns null, what a declined string reads as. */
    private String decline() {
        declined = true;
        return null;
    }

    /** Four hex digits as a UTF-16 code unit; -1 when they are not. */
    private int hex4() {
        if (at + 4 > in.length) {
            return -1;
        }
        int unit = 0;
        for (int i = 0; i < 4; i++) {
            int digit = Character.digit(in[at++], 16);
            if (digit < 0) {
                return -1;
            }
            unit = unit << 4 | digit;
        }
        return unit;
    }

    /**
     * An integer as the writer writes it (an optional minus, no leading zero, at most {@link #MAX_DIGITS} digits);
     * on anything else the position stays where it was.
     */
    private long integer() {
        int start = at;
        boolean negative = literal('-');
        int digitsFrom = at;
        long value = 0;
        while (at < in.length && in[at] >= '0' && in[at] <= '9' && at - digitsFrom < MAX_DIGITS) {
            value = value * 10 + (in[at++] - '0');
        }
        int digits = at - digitsFrom;
        boolean more = at < in.length && in[at] >= '0' && in[at] <= '9';
        if (digits == 0 || more || (digits > 1 && in[digitsFrom] == '0')) {
            at = start;
            return 0;
        }
        return negative ? -value : value;
    }

    private boolean literal(char c) {
        if (at < in.length && in[at] == c) {
            at++;
            return true;
        }
        return false;
    }

    private boolean literal(byte[] bytes) {
        if (in.length - at < bytes.length) {
            return false;
        }
        for (int i = 0; i < bytes.length; i++) {
            if (in[at + i] != bytes[i]) {
                return false;
            }
        }
        at += bytes.length;
        return true;
    }

    /** {@code "name":}, as the writer puts it before a field's value. */
    private static byte[] name(String name) {
        return ("\"" + name + "\":").getBytes(StandardCharsets.US_ASCII);
    }
}
