package io.turnstream.gateway;

/**
 * What the API tells about a turn.
 *
 * @param status {@code running}, {@code complete}, {@code error} or {@code aborted}
 */
public record TurnStatus(String turnId, String threadId, String runId, String status) {

    public static final String RUNNING = "running";

    public TurnStatus withStatus(String newStatus) {
        return new TurnStatus(turnId, threadId, runId, newStatus);
    }
}
