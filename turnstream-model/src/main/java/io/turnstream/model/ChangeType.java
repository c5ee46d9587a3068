package io.turnstream.model;

/**
 * {@code UIUpsert.changeType}: the first upsert of an item, a later one, or its last; {@code withdrawn}
 * takes the item back (it belonged to a model call that failed and was made again): a UI removes it.
 */
public enum ChangeType implements WireValue {
    CREATED, UPDATED, COMPLETED, WITHDRAWN;

    @Override
    public String toString() {
        return wire();
    }
}
