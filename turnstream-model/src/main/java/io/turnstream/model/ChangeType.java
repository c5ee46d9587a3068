package io.turnstream.model;

/** {@code UIUpsert.changeType}: the first upsert of an item, a later one, or its last. */
public enum ChangeType implements WireValue {
    CREATED, UPDATED, COMPLETED;

    @Override
    public String toString() {
        return wire();
    }
}
