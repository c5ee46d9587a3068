package io.turnstream.model;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;

/**
 * The payload of an {@link UpsertEnvelope}: an item upsert, a turn lifecycle event or a status,
 * told apart by {@code type}.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.EXISTING_PROPERTY, property = "type", visible = true)
@JsonSubTypes({
    @JsonSubTypes.Type(value = UIUpsert.class, name = UIUpsert.TYPE),
    @JsonSubTypes.Type(value = UITurnEvent.class, names = {
        UITurnEvent.TURN_STARTED, UITurnEvent.TURN_COMPLETED, UITurnEvent.TURN_ERROR}),
    @JsonSubTypes.Type(value = UIStatus.class, names = {UIStatus.TURN_STATUS, UIStatus.TOOL_STATUS})
})
public sealed interface UiPayload permits UIUpsert, UITurnEvent, UIStatus {

    String type();

    String turnId();

    /**
     * What this payload is the latest state of, within its turn: the item id, {@code turn} for the
     * lifecycle, {@code status} for the turn's status, {@code tool-status/{callId}} for a tool's.
     * {@code llm.item-state} keys are {@code {turnId}/{stateKey}}.
     */
    @JsonIgnore
    default String stateKey() {
        return "turn";
    }

    /** The envelope's {@code payloadType} for this payload. */
    @JsonIgnore
    default String payloadType() {
        return UpsertEnvelope.TURN_EVENT;
    }
}
