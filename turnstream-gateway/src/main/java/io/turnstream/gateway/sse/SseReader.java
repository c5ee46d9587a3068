package io.turnstream.gateway.sse;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * Reads server-sent events from a byte stream, following the WHATWG event-stream rules: lines end
 * with LF, CRLF or CR; a blank line dispatches; {@code data:} lines are joined with LF; a single
 * space after the colon is dropped; comment lines ({@code :}) and unknown fields are ignored. One
 * deviation on purpose: a last event that is not followed by a blank line is still dispatched at
 * end of stream, because recorded provider bodies are often stored without the final newline.
 * Shared by every provider adapter and by the simulated provider's tests.
 */
public final class SseReader {

    private static final int CR = '\r';
    private static final int LF = '\n';

    private final InputStream in;
    private final ByteArrayOutputStream line = new ByteArrayOutputStream(256);
    private boolean lastWasCr;
    private boolean firstLine = true;
    private boolean eof;

    private String eventName;
    private StringBuilder data;
    private String lastEventId = "";

    public SseReader(InputStream in) {
        this.in = new BufferedInputStream(in, 8192);
    }

    /** The next event, or null at end of stream. */
    public SseEvent next() throws IOException {
        while (!eof) {
            String text = readLine();
            if (text == null) {
                eof = true;
                return pending();
            }
            if (text.isEmpty()) {
                SseEvent event = pending();
                if (event != null) {
                    return event;
                }
                continue;
            }
            field(text);
        }
        return null;
    }

    private void field(String text) {
        if (text.charAt(0) == ':') {
            return;
        }
        int colon = text.indexOf(':');
        String name = colon < 0 ? text : text.substring(0, colon);
        String value = colon < 0 ? "" : text.substring(colon + 1);
        if (value.startsWith(" ")) {
            value = value.substring(1);
        }
        switch (name) {
            case "event" -> eventName = value;
            case "data" -> {
                if (data == null) {
                    data = new StringBuilder(value);
                } else {
                    data.append('\n').append(value);
                }
            }
            case "id" -> {
                if (value.indexOf('\0') < 0) {
                    lastEventId = value;
                }
            }
            default -> {
                // retry and anything else carry nothing a reader here needs
            }
        }
    }

    /**
     * The last {@code id:} field seen so far (it carries over to later events that have none), as an
     * EventSource sends it back in {@code Last-Event-ID} when it reconnects; "" before any.
     */
    public String lastEventId() {
        return lastEventId;
    }

    /** Dispatches the buffered event; an event without data is dropped, as the spec says. */
    private SseEvent pending() {
        SseEvent event = data == null ? null : new SseEvent(eventName, data.toString());
        eventName = null;
        data = null;
        return event;
    }

    /** One line without its terminator, or null at end of stream with nothing buffered. */
    private String readLine() throws IOException {
        line.reset();
        while (true) {
            int b = in.read();
            if (b < 0) {
                return line.size() == 0 ? null : decode();
            }
            if (b == LF && lastWasCr) {
                lastWasCr = false;
                continue;
            }
            lastWasCr = b == CR;
            if (b == CR || b == LF) {
                return decode();
            }
            line.write(b);
        }
    }

    private String decode() {
        String text = line.toString(StandardCharsets.UTF_8);
        if (firstLine) {
            firstLine = false;
            if (text.startsWith("\uFEFF")) {
                text = text.substring(1);
            }
        }
        return text;
    }
}
