package io.turnstream.gateway.sse;

/**
 * One dispatched server-sent event.
 *
 * @param event the {@code event:} field, or null when the event had none
 * @param data the {@code data:} lines joined with {@code \n}
 */
public record SseEvent(String event, String data) {
}
