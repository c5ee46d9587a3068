package io.turnstream.gateway.provider;

/**
 * Error codes the gateway puts in {@code item_error}, {@code response_error} and its logs when the
 * provider gave none of its own. A provider's own error type (for example {@code overloaded_error}
 * or {@code insufficient_quota}) is passed through as the code instead.
 */
public final class ErrorCodes {

    /** An event's data was not JSON (or not an object): the stream is corrupt. */
    public static final String BAD_PROVIDER_DATA = "BAD_PROVIDER_DATA";
    /** The stream ended before the provider's terminal event. */
    public static final String STREAM_TRUNCATED = "STREAM_TRUNCATED";
    /** No bytes arrived for the stall timeout. */
    public static final String STREAM_STALLED = "STREAM_STALLED";
    /** The provider could not be reached, or the connection broke. */
    public static final String CONNECTION_FAILED = "CONNECTION_FAILED";
    /** The stream broke the protocol's rules (for example a second message spliced into the first). */
    public static final String INVALID_RESPONSE = "INVALID_RESPONSE";
    /** The provider reported an error without a type of its own. */
    public static final String PROVIDER_ERROR = "PROVIDER_ERROR";
    /** A tool call's result did not arrive on the tool-results topic in time. */
    public static final String TOOL_RESULT_TIMEOUT = "TOOL_RESULT_TIMEOUT";
    /** The tool executor's code for a call that was denied and did not run. */
    public static final String TOOL_CALL_DENIED = "DENIED";
    /** A tool call that will get no result because its turn was cancelled. */
    public static final String TOOL_CALL_ABORTED = "ABORTED";
    /** The conversation does not fit the model's context window, even after compacting it. */
    public static final String CONTEXT_OVERFLOW = "CONTEXT_OVERFLOW";
    /** The model gave no summary when asked to compact the conversation. */
    public static final String COMPACTION_FAILED = "COMPACTION_FAILED";
    /**
     * The turn's request cannot run on the gateway that owns its partition (for example: its provider is
     * not configured there).
     */
    public static final String TURN_CANNOT_RUN = "TURN_CANNOT_RUN";
    /** The turn's thread had a running turn and the busy-thread policy is {@code reject}. */
    public static final String THREAD_BUSY = "THREAD_BUSY";
    /** Another request under the turn's {@code Idempotency-Key} took the key first; the turn was not run. */
    public static final String IDEMPOTENCY_KEY_REUSED = "IDEMPOTENCY_KEY_REUSED";
    /** An unexpected failure inside the gateway. */
    public static final String INTERNAL = "INTERNAL";

    private ErrorCodes() {
    }

    /** Whether a provider error type means "try again later" rather than "this request is wrong". */
    static boolean transientType(String type) {
        if (type == null) {
            return false;
        }
        String t = type.toLowerCase(java.util.Locale.ROOT);
        return t.contains("overloaded") || t.contains("rate_limit") || t.contains("server_error")
                || t.equals("api_error") || t.contains("timeout") || t.contains("unavailable");
    }

    static boolean overloadedType(String type) {
        return type != null && type.toLowerCase(java.util.Locale.ROOT).contains("overloaded");
    }
}
