package io.turnstream.model;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A record on {@code llm.turn-requests}, keyed by thread id, so one thread's turns share a partition
 * and the gateway that owns the partition runs them. Two kinds: {@code request} (a turn was accepted:
 * its ids, the validated request as the {@code POST /v1/turns} body, when it was accepted, and the
 * tenant the HTTP layer resolved) and {@code step} (the owner completed a model step: what the
 * next owner needs to go on from there without calling the model again).
 *
 * @param requestedAt epoch milliseconds when the turn was accepted; on step records too
 * @param tenantId null when the gateway resolves no tenant
 * @param request {@code request} records: the validated request body
 * @param step {@code step} records: the step's number, from 1
 * @param checkpoint {@code step} records: model, usage so far, the assistant's step in the
 *                   provider's wire shape, its tool calls and finish reason
 */
public record TurnRequestRecord(Kind type, String turnId, String threadId, String runId, String tenantId,
                                long requestedAt, JsonNode request, Long step, JsonNode checkpoint) {

    /** The two kinds of record on {@code llm.turn-requests}. */
    public enum Kind implements WireValue {
        REQUEST, STEP;

        @Override
        public String toString() {
            return wire();
        }
    }

    public static TurnRequestRecord request(String turnId, String threadId, String runId, String tenantId,
                                            long requestedAt, JsonNode request) {
        return new TurnRequestRecord(Kind.REQUEST, turnId, threadId, runId, tenantId, requestedAt, request, null, null);
    }

    public TurnRequestRecord stepDone(long stepNumber, JsonNode stepCheckpoint) {
        return new TurnRequestRecord(Kind.STEP, turnId, threadId, runId, tenantId, requestedAt, null, stepNumber,
                stepCheckpoint);
    }

    public boolean startsTurn() {
        return type == Kind.REQUEST;
    }
}
