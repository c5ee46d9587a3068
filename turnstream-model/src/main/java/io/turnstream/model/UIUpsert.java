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

    /**
     * A text item's state (a message, reasoning, ...).
     *
     * @param origin who wrote a message ({@link Origins}); null for other items
     * @param providerId the provider's id of a reasoning item, which it needs back on the next call; else null
     */
    public static UIUpsert text(String turnId, String threadId, String itemId, UiItemType itemType, ChangeType changeType,
                                long version, String content, String origin, String providerId) {
        return new UIUpsert(UiPayloadType.ITEM_UPSERT, turnId, threadId, itemId, itemType, changeType, version, content,
                origin, providerId, null, null, null, null, null, null, null);
    }

    /** A tool call's state: its arguments as streamed so far, and as JSON ({@link Json#parseOrText}). */
    public static UIUpsert toolCall(String turnId, String threadId, String itemId, ChangeType changeType, long version,
                                    String toolName, String arguments, String callId) {
        return new UIUpsert(UiPayloadType.ITEM_UPSERT, turnId, threadId, itemId, UiItemType.TOOL_CALL, changeType, version,
                arguments, null, null, toolName, Json.parseOrText(arguments), callId, null, null, null, null);
    }

    /** A tool's output, which arrives whole: as text, and as JSON ({@link Json#parseOrText}). */
    public static UIUpsert toolOutput(String turnId, String threadId, String itemId, long version, String output,
                                      String callId, Boolean success) {
        return new UIUpsert(UiPayloadType.ITEM_UPSERT, turnId, threadId, itemId, UiItemType.TOOL_OUTPUT,
                ChangeType.COMPLETED, version, output, null, null, null, null, callId, Json.parseOrText(output), success,
                null, null);
    }

    /** An item that failed: it closes as an {@code error} item whose content is the message. */
    public static UIUpsert error(String turnId, String threadId, String itemId, long version, String code, String message) {
        return new UIUpsert(UiPayloadType.ITEM_UPSERT, turnId, threadId, itemId, UiItemType.ERROR, ChangeType.COMPLETED,
                version, message != null ? message : "", null, null, null, null, null, null, null, code, message);
    }

    /**
     * Takes an item back: its attempt failed and the model was called again. Its content is empty;
     * the item's {@code llm.item-state} key is tombstoned rather than given this upsert.
     */
    public static UIUpsert withdrawn(String turnId, String threadId, String itemId, UiItemType itemType, long version,
                                     String callId) {
        return new UIUpsert(UiPayloadType.ITEM_UPSERT, turnId, threadId, itemId, itemType, ChangeType.WITHDRAWN, version,
                "", null, null, null, null, callId, null, null, null, null);
    }

    @Override
    public String stateKey() {
        return itemId;
    }
}
