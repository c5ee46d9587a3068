package io.turnstream.gateway.view;

import io.turnstream.gateway.http.EventStream;
import io.turnstream.model.Json;
import java.util.Map;

/**
 * What one kind of SSE client makes of a turn's live events. Called on one sender thread at a time,
 * in order, so an encoder may keep state.
 */
public interface LiveEncoder {

    /** Writes what comes before the first event (nothing by default). */
    default void open(EventStream client) {
    }

    /**
     * Writes what {@code event} becomes for this client.
     *
     * @param position the client's position once it has the event (the resumable event id)
     */
    void write(LiveEvent event, StreamPosition position, EventStream client);

    /** Writes what ends the stream after the turn's terminal event (nothing by default). */
    default void close(EventStream client) {
    }

    /**
     * Writes the last event of a stream closed because its client fell too far behind (an {@code error}
     * event {@code {"error": message}} by default); the client may resume from its last event id.
     */
    default void fellBehind(EventStream client, String message) {
        client.sendEvent("error", Json.toString(Map.of("error", message)));
    }
}
