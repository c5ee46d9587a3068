package io.turnstream.model;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;

/** The payload of an {@link UpsertEnvelope}: an item upsert or a turn lifecycle event, told apart by {@code type}. */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.EXISTING_PROPERTY, property = "type", visible = true)
@JsonSubTypes({
    @JsonSubTypes.Type(value = UIUpsert.class, name = UIUpsert.TYPE),
    @JsonSubTypes.Type(value = UITurnEvent.class, names = {
        UITurnEvent.TURN_STARTED, UITurnEvent.TURN_COMPLETED, UITurnEvent.TURN_ERROR})
})
public sealed interface UiPayload permits UIUpsert, UITurnEvent {

    String type();

    String turnId();
}
