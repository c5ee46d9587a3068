package io.turnstream.gateway.sse;

import java.nio.charset.StandardCharsets;

/** Writes server-sent events, the inverse of {@link SseReader}. */
public final class SseFormat {

    private SseFormat() {
    }

    /** {@code event: <name>} (when it has one), one {@code data:} line per line of data, then a blank line. */
    public static byte[] format(SseEvent event) {
        StringBuilder text = new StringBuilder();
        if (event.event() != null) {
            text.append("event: ").append(event.event()).append('\n');
        }
        for (String line : event.data().split("\r\n|\r|\n", -1)) {
            text.append("data: ").append(line).append('\n');
        }
        return text.append('\n').toString().getBytes(StandardCharsets.UTF_8);
    }
}
