package io.turnstream.gateway.provider;

/**
 * The finish reasons a step reports in {@code response_done.finish_reason}, the same words for every
 * provider. A provider reason with no equivalent passes through as the provider said it.
 */
public final class FinishReasons {

    public static final String STOP = "stop";
    public static final String TOOL_CALLS = "tool_calls";
    public static final String LENGTH = "length";
    public static final String CONTENT_FILTER = "content_filter";
    public static final String REFUSAL = "refusal";
    /**
     * Anthropic paused a long server-tool turn; the step goes on by sending the paused content back
     * ({@link ProviderClient}). Reported only when it kept pausing past the resume limit.
     */
    public static final String PAUSE_TURN = "pause_turn";
    /**
     * A tool call was denied (by a person, the approval timeout or the deployment's policy) and the
     * turn stopped there without calling the model again ({@code turnstream.gateway.approvals.on-deny=stop}).
     */
    public static final String TOOL_DENIED = "tool_denied";
    /** The turn reached its step limit while the model still wanted tools. */
    public static final String MAX_STEPS = "max_steps";

    private FinishReasons() {
    }
}
