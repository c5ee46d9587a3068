package io.turnstream.model;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The full current state of one item. {@code version} increases by one per upsert of the item,
 * so a stale upsert never overwrites a newer one.
 */
public record UIUpsert(String type, String turnId, String threadId, String itemId, String itemType,
                       String changeType, long version, String content, String origin, String providerId,
                       String toolName, JsonNode toolArguments, String callId, JsonNode toolOutput,
                       Boolean success, String errorCode, String errorMessage) implements UiPayload {

    public static final String TYPE = "item_upsert";
    public static final String CREATED = "created";
    public static final String UPDATED = "updated";
    public static final String COMPLETED = "completed";

    @Override
    public String stateKey() {
        return itemId;
    }

    @Override
    public String payloadType() {
        return UpsertEnvelope.ITEM_UPSERT;
    }
}
