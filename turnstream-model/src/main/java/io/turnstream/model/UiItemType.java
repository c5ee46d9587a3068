package io.turnstream.model;

/** {@code UIUpsert.itemType}: the item types a UI binds. */
public enum UiItemType implements WireValue {
    MESSAGE, REASONING, TOOL_CALL, TOOL_OUTPUT, ERROR;

    @Override
    public String toString() {
        return wire();
    }
}
