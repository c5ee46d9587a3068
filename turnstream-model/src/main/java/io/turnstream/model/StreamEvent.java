package io.turnstream.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

/**
 * One normalised provider event on {@code llm.raw-events}, keyed by run id. Snake case, as in the
 * seed documents. {@code type} repeats {@code payload.type} so consumers can filter without
 * descending into the payload.
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record StreamEvent(
        String eventId,
        long timestamp,
        JsonNode traceContext,
        String runId,
        String type,
        StreamPayload payload) {

    public static StreamEvent of(String eventId, long timestamp, String runId, StreamPayload payload) {
        return new StreamEvent(eventId, timestamp, null, runId, payload.type(), payload);
    }
}
