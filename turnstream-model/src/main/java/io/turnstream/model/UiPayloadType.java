package io.turnstream.model;

import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * The {@code type} of a {@link UiPayload}: it names the payload's record and the envelope's
 * {@link PayloadType}, so the JSON type ids and the records cannot drift apart.
 */
public enum UiPayloadType implements WireValue {
    ITEM_UPSERT(UIUpsert.class, PayloadType.ITEM_UPSERT),
    TURN_STARTED(UITurnEvent.class, PayloadType.TURN_EVENT),
    TURN_COMPLETED(UITurnEvent.class, PayloadType.TURN_EVENT),
    TURN_ERROR(UITurnEvent.class, PayloadType.TURN_EVENT),
    TURN_STATUS(UIStatus.class, PayloadType.STATUS),
    TOOL_STATUS(UIStatus.class, PayloadType.STATUS);

    private final Class<? extends UiPayload> recordType;
    private final PayloadType payloadType;

    UiPayloadType(Class<? extends UiPayload> recordType, PayloadType payloadType) {
        this.recordType = recordType;
        this.payloadType = payloadType;
    }

    public static UiPayloadType fromWire(String wire) {
        return WireValue.fromWire(UiPayloadType.class, wire);
    }

    /** The record a payload of this type is. */
    public Class<? extends UiPayload> recordType() {
        return recordType;
    }

    /** The envelope's {@code payloadType} for a payload of this type. */
    public PayloadType payloadType() {
        return payloadType;
    }

    /** The types whose record is {@code recordType}, in wire form: for error messages. */
    static String typesOf(Class<? extends UiPayload> recordType) {
        return Arrays.stream(values()).filter(type -> type.recordType == recordType).map(UiPayloadType::wire)
                .collect(Collectors.joining(", "));
    }

    @Override
    public String toString() {
        return wire();
    }
}
