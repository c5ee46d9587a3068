package io.turnstream.model;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The full current state of one item. {@code version} increases by one per upsert of the item,
 * so a stale upsert never overwrites a newer one. {@code type} is always {@link UiPayloadType#ITEM_UPSERT}.
 */
public record UIUpsert(UiPayloadType type, String turnId, String threadId, String itemId, UiItemType itemType,
                       ChangeType changeType, long version, String content, String origin, String providerId,
                       String toolName, JsonNode toolArguments, String callId, JsonNode toolOutput,
                       Boolean success, String errorCode, String errorMessage) implements UiPayload {

    public UIUpsert {
        UiPayload.requireTypeOf(UIUpsert.class, type);
    }

    @Override
    public String stateKey() {
        return itemId;
    }
}
