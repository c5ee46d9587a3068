package io.turnstream.model;

/**
 * One record on {@code llm.upserts} (keyed by turn id) and {@code llm.item-state}. {@code seq}
 * increases by one per record within a turn, starting at 1.
 */
public record UpsertEnvelope(String eventId, long timestamp, String turnId, long seq, String payloadType,
                             UiPayload payload) {

    public static final String ITEM_UPSERT = "item_upsert";
    public static final String TURN_EVENT = "turn_event";
    /** A {@link UIStatus}: a turn's or a tool call's status while the turn runs. */
    public static final String STATUS = "status";
}
