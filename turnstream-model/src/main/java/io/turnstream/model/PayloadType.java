package io.turnstream.model;

/** {@code UpsertEnvelope.payloadType}: what kind of {@link UiPayload} the envelope carries. */
public enum PayloadType implements WireValue {
    ITEM_UPSERT, TURN_EVENT,
    /** A {@link UIStatus}: a turn's or a tool call's status while the turn runs. */
    STATUS;

    @Override
    public String toString() {
        return wire();
    }
}
