package io.turnstream.gateway.sse;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SseReaderTest {

    @Test
    void readsEventsWhateverTheLineEndings() throws IOException {
        String body = "event: a\r\ndata: one\r\n\r\nevent: b\rdata: two\r\rdata: three\n\n";

        assertThat(read(body)).containsExactly(new SseEvent("a", "one"), new SseEvent("b", "two"),
                new SseEvent(null, "three"));
    }

    @Test
    void joinsDataLinesAndIgnoresCommentsAndUnknownFields() throws IOException {
        String body = "\uFEFF: keep-alive\nid: 7\nretry: 10\n...\ndata: {\"a\":\ndata:1}\n\n";

        assertThat(read(body)).containsExactly(new SseEvent(null, "{\"a\":\n1}"));
    }

    @Test
    void anEventWithoutDataIsNotDispatched() throws IOException {
        assertThat(read("event: ping\n\nevent: x\ndata: y\n\n")).containsExactly(new SseEvent("x", "y"));
    }

    @Test
    void theLastEventIsDispatchedEvenWithoutItsBlankLine() throws IOException {
        assertThat(read("event: message_stop\ndata: {}")).containsExactly(new SseEvent("message_stop", "{}"));
    }

    @Test
    void formatIsTheInverseOfRead() throws IOException {
        SseEvent event = new SseEvent("multi", "line one\nline two");

        assertThat(read(new String(SseFormat.format(event), StandardCharsets.UTF_8))).containsExactly(event);
    }

    private static List<SseEvent> read(String body) throws IOException {
        SseReader reader = new SseReader(new ByteArrayInputStream(body.getBytes(StandardCharsets.UTF_8)));
        List<SseEvent> events = new ArrayList<>();
        for (SseEvent e = reader.next(); e != null; e = reader.next()) {
            events.add(e);
        }
        return events;
    }
}
