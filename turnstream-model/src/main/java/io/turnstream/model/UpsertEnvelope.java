package io.turnstream.model;

/**
 * One record on {@code llm.upserts} (keyed by turn id) and {@code llm.item-state}. {@code seq}
 * increases by one per record within a turn, starting at 1.
 */
public record UpsertEnvelope(String eventId, long timestamp, String turnId, long seq, PayloadType payloadType,
                             UiPayload payload) {
}
