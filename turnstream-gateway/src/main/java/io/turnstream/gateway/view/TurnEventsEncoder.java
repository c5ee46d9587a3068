package io.turnstream.gateway.view;

import io.turnstream.gateway.http.EventStream;
import io.turnstream.model.Json;

/**
 * The encoding of {@code GET /v1/turns/{turnId}/events}: an upsert is an unnamed event (an
 * EventSource's {@code message}) with the {@code UpsertEnvelope} JSON, an append is an {@code append}
 * event with the {@code ItemAppend} JSON; every event's id is the client's {@link StreamPosition}.
 */
final class TurnEventsEncoder implements LiveEncoder {

    static final String APPEND_EVENT = "append";

    @Override
    public void write(LiveEvent event, StreamPosition position, EventStream client) {
        if (event instanceof LiveEvent.Upsert upsert) {
            client.sendData(Json.toString(upsert.envelope()), position.eventId());
        } else if (event instanceof LiveEvent.Append append) {
            client.sendEvent(APPEND_EVENT, Json.toString(append.append()), position.eventId());
        }
    }
}
