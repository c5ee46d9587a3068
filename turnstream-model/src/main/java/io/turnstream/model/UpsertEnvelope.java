package io.turnstream.model;

/**
 * One record on {@code llm.upserts} (keyed by turn id) and {@code llm.item-state}. {@code seq}
 * increases by one per record within a turn, starting at 1.
 *
 * @param tenantId the turn's tenant (from {@code response_start}); null for a turn of no tenant
 */
public record UpsertEnvelope(String eventId, long timestamp, String turnId, long seq, PayloadType payloadType,
                             UiPayload payload, String tenantId) {

    /** An envelope of a turn of no tenant. */
    public UpsertEnvelope(String eventId, long timestamp, String turnId, long seq, PayloadType payloadType,
                          UiPayload payload) {
        this(eventId, timestamp, turnId, seq, payloadType, payload, null);
    }
}
