package io.turnstream.gateway.sse;

import java.nio.charset.StandardCharsets;

/** Writes server-sent events, the inverse of {@link SseReader}. */
public final class SseFormat {

    private SseFormat() {
    }

    /** {@code event: <name>} (when it has one), one {@code data:} line per line of data, then a blank line. */
    public static byte[] format(SseEvent event) {
        return format(event.event(), event.data(), null);
    }

    /**
     * {@code id: <id>} and {@code event: <name>} (each when given; line breaks in them dropped), one
     * {@code data:} line per line of data, then a blank line.
     */
    public static byte[] format(String event, String data, String id) {
        StringBuilder text = new StringBuilder();
        if (id != null) {
            text.append("id: ").append(oneLine(id)).append('\n');
        }
        if (event != null) {
            text.append("event: ").append(oneLine(event)).append('\n');
        }
        for (String line : data.split("\r\n|\r|\n", -1)) {
            text.append("data: ").append(line).append('\n');
        }
        return text.append('\n').toString().getBytes(StandardCharsets.UTF_8);
    }

    /** A comment line ({@code : <text>}), which readers skip: a heartbeat. */
    public static byte[] comment(String comment) {
        return (": " + oneLine(comment) + "\n").getBytes(StandardCharsets.UTF_8);
    }

    private static String oneLine(String field) {
        return field.replace("\r", "").replace("\n", "");
    }
}
