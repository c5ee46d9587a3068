package io.turnstream.model;

/**
 * Turn lifecycle: {@code turn_started}, {@code turn_completed} (with the {@code status} the turn ended with)
 * or {@code turn_error}. {@code tenantId} is the turn's tenant (from {@code response_start}), null for a turn
 * of no tenant. {@code finishReason} says why a completed turn stopped ({@code stop}, {@code length},
 * {@code max_steps}, ...: an open vocabulary, as providers add reasons); {@code modelId} on
 * {@code turn_completed} is the model actually used. {@code usage} and {@code failedAttemptsUsage} on
 * {@code turn_completed} and {@code turn_error}: what the turn's completed steps used, and apart from it
 * what its model calls used that failed (null when none did).
 */
public record UITurnEvent(UiPayloadType type, String turnId, String threadId, String modelId, String providerId,
                          ResponseStatus status, Usage usage, ErrorInfo error, String tenantId, String finishReason,
                          Usage failedAttemptsUsage) implements UiPayload {

    public UITurnEvent {
        UiPayload.requireTypeOf(UITurnEvent.class, type);
    }

    /** An event of a turn of no tenant. */
    public UITurnEvent(UiPayloadType type, String turnId, String threadId, String modelId, String providerId,
                       ResponseStatus status, Usage usage, ErrorInfo error) {
        this(type, turnId, threadId, modelId, providerId, status, usage, error, null, null, null);
    }

    public UITurnEvent(UiPayloadType type, String turnId, String threadId, String modelId, String providerId,
                       ResponseStatus status, Usage usage, ErrorInfo error, String tenantId) {
        this(type, turnId, threadId, modelId, providerId, status, usage, error, tenantId, null, null);
    }

    public UITurnEvent(UiPayloadType type, String turnId, String threadId, String modelId, String providerId,
                       ResponseStatus status, Usage usage, ErrorInfo error, String tenantId, String finishReason) {
        this(type, turnId, threadId, modelId, providerId, status, usage, error, tenantId, finishReason, null);
    }

    /** Token counts of the turn, summed over its steps; see {@link StreamPayload.Usage} for the optional ones. */
    public record Usage(long promptTokens, long completionTokens, long totalTokens, Long cacheReadTokens,
                        Long cacheWriteTokens, Long reasoningTokens, Double costUsd) {

        public Usage(long promptTokens, long completionTokens, long totalTokens) {
            this(promptTokens, completionTokens, totalTokens, null, null, null, null);
        }
    }
}
