package io.turnstream.gateway.turn;

/** What the API tells about a turn. */
public record TurnStatus(String turnId, String threadId, String runId, TurnPhase status) {

    public TurnStatus withStatus(TurnPhase newStatus) {
        return new TurnStatus(turnId, threadId, runId, newStatus);
    }
}
