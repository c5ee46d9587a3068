package io.turnstream.model;

/**
 * Turn lifecycle: {@code turn_started}, {@code turn_completed} or {@code turn_error}. {@code tenantId} is the
 * turn's tenant (from {@code response_start}), null for a turn of no tenant. {@code finishReason} says why a
 * completed turn stopped ({@code stop}, {@code length}, {@code max_steps}, ...); {@code modelId} on
 * {@code turn_completed} is the model actually used.
 */
public record UITurnEvent(String type, String turnId, String threadId, String modelId, String providerId,
                          String status, Usage usage, ErrorInfo error, String tenantId, String finishReason)
        implements UiPayload {

    /** An event of a turn of no tenant. */
    public UITurnEvent(String type, String turnId, String threadId, String modelId, String providerId,
                       String status, Usage usage, ErrorInfo error) {
        this(type, turnId, threadId, modelId, providerId, status, usage, error, null, null);
    }

    public UITurnEvent(String type, String turnId, String threadId, String modelId, String providerId,
                       String status, Usage usage, ErrorInfo error, String tenantId) {
        this(type, turnId, threadId, modelId, providerId, status, usage, error, tenantId, null);
    }

    public static final String TURN_STARTED = "turn_started";
    public static final String TURN_COMPLETED = "turn_completed";
    public static final String TURN_ERROR = "turn_error";

    /** Token counts of the turn, summed over its steps; see {@link StreamPayload.Usage} for the optional ones. */
    public record Usage(long promptTokens, long completionTokens, long totalTokens, Long cacheReadTokens,
                        Long cacheWriteTokens, Long reasoningTokens, Double costUsd) {

        public Usage(long promptTokens, long completionTokens, long totalTokens) {
            this(promptTokens, completionTokens, totalTokens, null, null, null, null);
        }
    }
}
