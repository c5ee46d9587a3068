package io.turnstream.topology;

import io.turnstream.model.ErrorInfo;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.StreamPayload.ResponseDone;
import io.turnstream.model.StreamPayload.ResponseError;
import io.turnstream.model.StreamPayload.ToolStatus;
import io.turnstream.model.StreamPayload.TurnStatus;
import io.turnstream.model.TurnActivity;
import io.turnstream.model.UIStatus;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UiPayloadType;

/**
 * The upserts of what the gateway reports besides items: the statuses of a running turn and of its
 * tool calls ({@code turn_status}, {@code tool_status} become a {@link UIStatus} each, passed through
 * as they come), and the closing {@code turn_completed} with its finish reason, the model used and
 * the usage of its failed model calls apart, or {@code turn_error} with its error and the same usages
 * (a failed turn's tokens are spent too).
 */
final class StatusUpserts {

    private StatusUpserts() {
    }

    static boolean isStatus(StreamPayload payload) {
        return payload instanceof TurnStatus || payload instanceof ToolStatus;
    }

    static UIStatus status(TurnState turn, StreamPayload payload) {
        if (payload instanceof TurnStatus status) {
            if (status.status() == TurnActivity.STEP_COMPLETED && status.usage() != null) {
                turn.stepsUsage = turn.stepsUsage == null ? status.usage() : turn.stepsUsage.plus(status.usage());
            }
            return UIStatus.ofTurn(turn.turnId, turn.threadId, status, UpsertEmitter.usage(status.usage()));
        }
        return UIStatus.ofTool(turn.turnId, turn.threadId, (ToolStatus) payload);
    }

    static UITurnEvent turnCompleted(TurnState turn, ResponseDone done) {
        ResponseStatus status = done.status() != null ? done.status() : ResponseStatus.COMPLETE;
        return new UITurnEvent(UiPayloadType.TURN_COMPLETED, turn.turnId, turn.threadId, done.modelId(), null, status,
                UpsertEmitter.usage(done.usage()), null, turn.tenantId, done.finishReason(),
                UpsertEmitter.usage(done.failedAttemptsUsage()));
    }

    /**
     * The end of a turn whose gateway sent no end for the idle timeout: its usage is what its completed steps
     * reported (their {@code step_completed} statuses; summarising and failed calls are not reported there).
     */
    static UITurnEvent turnTimedOut(TurnState turn, long idleTimeoutMs) {
        return new UITurnEvent(UiPayloadType.TURN_ERROR, turn.turnId, turn.threadId, null, null, null,
                UpsertEmitter.usage(turn.stepsUsage), ErrorInfo.of("TURN_TIMEOUT", "no event for " + idleTimeoutMs + " ms"),
                turn.tenantId);
    }

    static UITurnEvent turnError(TurnState turn, ResponseError failed) {
        ErrorInfo error = failed.error() != null ? ErrorInfo.of(failed.error().code(), failed.error().message())
                : ErrorInfo.of("RESPONSE_ERROR", "response failed");
        return new UITurnEvent(UiPayloadType.TURN_ERROR, turn.turnId, turn.threadId, null, null, null,
                UpsertEmitter.usage(failed.usage()), error, turn.tenantId, null,
                UpsertEmitter.usage(failed.failedAttemptsUsage()));
    }
}
