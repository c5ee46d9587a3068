package io.turnstream.model;

/**
 * Turn lifecycle: {@code turn_started}, {@code turn_completed} or {@code turn_error}. {@code tenantId} is the
 * turn's tenant (from {@code response_start}), null for a turn of no tenant.
 */
public record UITurnEvent(String type, String turnId, String threadId, String modelId, String providerId,
                          String status, Usage usage, ErrorInfo error, String tenantId) implements UiPayload {

    /** An event of a turn of no tenant. */
    public UITurnEvent(String type, String turnId, String threadId, String modelId, String providerId,
                       String status, Usage usage, ErrorInfo error) {
        this(type, turnId, threadId, modelId, providerId, status, usage, error, null);
    }

    public static final String TURN_STARTED = "turn_started";
    public static final String TURN_COMPLETED = "turn_completed";
    public static final String TURN_ERROR = "turn_error";

    public record Usage(long promptTokens, long completionTokens, long totalTokens) {
    }
}
