package io.turnstream.model;

/** Turn lifecycle: {@code turn_started}, {@code turn_completed} or {@code turn_error}. */
public record UITurnEvent(String type, String turnId, String threadId, String modelId, String providerId,
                          String status, Usage usage, ErrorInfo error) implements UiPayload {

    public static final String TURN_STARTED = "turn_started";
    public static final String TURN_COMPLETED = "turn_completed";
    public static final String TURN_ERROR = "turn_error";

    public record Usage(long promptTokens, long completionTokens, long totalTokens) {
    }
}
