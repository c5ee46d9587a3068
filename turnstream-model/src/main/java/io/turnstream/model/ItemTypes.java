package io.turnstream.model;

/** Item type names of the contract: raw ({@code item_type}) and as the UI sees them ({@code itemType}). */
public final class ItemTypes {

    public static final String MESSAGE = "message";
    public static final String REASONING = "reasoning";
    public static final String FUNCTION_CALL = "function_call";
    public static final String FUNCTION_CALL_OUTPUT = "function_call_output";
    public static final String ERROR = "error";

    public static final String UI_TOOL_CALL = "tool_call";
    public static final String UI_TOOL_OUTPUT = "tool_output";

    public static final String ORIGIN_USER = "user";
    public static final String ORIGIN_AGENT = "agent";
    /** A message holding the summary that replaced the conversation before it (context compaction). */
    public static final String ORIGIN_COMPACTION = "compaction";

    private ItemTypes() {
    }

    /** The UI item type for a raw item type, or null when the raw type is not one of the contract. */
    public static String uiType(String rawType) {
        if (rawType == null) {
            return null;
        }
        return switch (rawType) {
            case MESSAGE, REASONING, ERROR -> rawType;
            case FUNCTION_CALL -> UI_TOOL_CALL;
            case FUNCTION_CALL_OUTPUT -> UI_TOOL_OUTPUT;
            default -> null;
        };
    }
}
