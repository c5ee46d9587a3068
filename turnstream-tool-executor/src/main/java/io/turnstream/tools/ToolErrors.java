package io.turnstream.tools;

/** The {@code error.code} values of a failed {@code ToolResult}. */
public final class ToolErrors {

    /** No tool of that name is registered. */
    public static final String TOOL_NOT_FOUND = "TOOL_NOT_FOUND";
    /** The arguments are not a JSON object or do not match the tool's schema. */
    public static final String INVALID_ARGUMENTS = "INVALID_ARGUMENTS";
    /** The tool reported an error (file not found, text not found, ...). */
    public static final String TOOL_ERROR = "TOOL_ERROR";
    /** A path points outside the workspace. */
    public static final String ACCESS_DENIED = "ACCESS_DENIED";
    /** The tool threw an unexpected exception; counts as an unrecoverable failure of the turn. */
    public static final String TOOL_CRASHED = "TOOL_CRASHED";
    /** The tool did not finish within its timeout. */
    public static final String TIMEOUT = "TIMEOUT";
    /** The call was aborted: the user cancelled the turn, or a sibling call failed. */
    public static final String ABORTED = "ABORTED";
    /** A non-idempotent call was started before the executor died; it is not run a second time. */
    public static final String OUTCOME_UNKNOWN = "OUTCOME_UNKNOWN";
    /** The same call was repeated too many times in a row; not run. */
    public static final String DOOM_LOOP = "DOOM_LOOP";
    /** A write would pass a quota: the bytes one call may write, a file's size, or its tenant's workspace's disk quota. */
    public static final String QUOTA_EXCEEDED = "QUOTA_EXCEEDED";
    /** The call was denied: by policy, by the user, or because no approval came in time. */
    public static final String DENIED = "DENIED";

    private ToolErrors() {
    }
}
