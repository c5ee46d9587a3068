package io.turnstream.model;

/** The raw item types of {@code item_start.item_type} and {@code final_item.type}. */
public enum ItemType implements WireValue {
    MESSAGE, REASONING, FUNCTION_CALL, FUNCTION_CALL_OUTPUT, ERROR;

    /** The raw type of that name, or null when {@code wire} is not one of the contract (the topology rejects it). */
    public static ItemType fromWire(String wire) {
        return WireValue.fromWire(ItemType.class, wire);
    }

    /** How the UI sees an item of this type. */
    public UiItemType uiType() {
        return switch (this) {
            case MESSAGE -> UiItemType.MESSAGE;
            case REASONING -> UiItemType.REASONING;
            case FUNCTION_CALL -> UiItemType.TOOL_CALL;
            case FUNCTION_CALL_OUTPUT -> UiItemType.TOOL_OUTPUT;
            case ERROR -> UiItemType.ERROR;
        };
    }

    /** Messages and reasoning stream their content in deltas; the other types complete in one piece. */
    public boolean streamed() {
        return this == MESSAGE || this == REASONING;
    }

    @Override
    public String toString() {
        return wire();
    }
}
