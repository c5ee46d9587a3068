package io.turnstream.tools;

/** An error a tool reports to the model, with the code that goes into the result's {@code error.code}. */
public class ToolException extends Exception {

    private final String code;
    private final boolean unrecoverable;

    public ToolException(String message) {
        this(ToolErrors.TOOL_ERROR, message, false);
    }

    public ToolException(String code, String message) {
        this(code, message, false);
    }

    private ToolException(String code, String message, boolean unrecoverable) {
        super(message);
        this.code = code;
        this.unrecoverable = unrecoverable;
    }

    /**
     * An error after which the turn's other calls make no sense (like a failed shell command that later
     * commands depend on): the executor aborts the running and queued sibling calls of the turn.
     */
    public static ToolException unrecoverable(String message) {
        return new ToolException(ToolErrors.TOOL_ERROR, message, true);
    }

    public String code() {
        return code;
    }

    public boolean unrecoverable() {
        return unrecoverable;
    }
}
