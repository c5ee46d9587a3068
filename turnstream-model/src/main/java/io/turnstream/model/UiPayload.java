package io.turnstream.model;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import com.fasterxml.jackson.databind.annotation.JsonTypeIdResolver;

/**
 * The payload of an {@link UpsertEnvelope}: an item upsert, a turn lifecycle event or a status,
 * told apart by {@code type} (a {@link UiPayloadType}).
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.CUSTOM, include = JsonTypeInfo.As.EXISTING_PROPERTY, property = "type", visible = true)
@JsonTypeIdResolver(UiPayloadTypeIds.class)
public sealed interface UiPayload permits UIUpsert, UITurnEvent, UIStatus {

    UiPayloadType type();

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
    default PayloadType payloadType() {
        return type().payloadType();
    }

    /** Checks a record's {@code type} names that record: a turn event cannot claim to be an item upsert. */
    static void requireTypeOf(Class<? extends UiPayload> recordType, UiPayloadType type) {
        if (type == null || type.recordType() != recordType) {
            throw new IllegalArgumentException(recordType.getSimpleName() + " type must be one of ["
                    + UiPayloadType.typesOf(recordType) + "], not " + type);
        }
    }
}
