package io.turnstream.gateway.loop;

import io.turnstream.gateway.provider.ToolCallRequest;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.StreamPayload.ToolStatus;
import io.turnstream.model.StreamPayload.TurnStatus;
import io.turnstream.model.ToolResult;
import io.turnstream.model.ToolState;
import io.turnstream.model.TurnActivity;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * Publishes what a user should see while a turn runs besides its items: {@code turn_status} events
 * (retrying, fallback, stalled, compacting, and running again after one of those) and each tool
 * call's {@code tool_status} lifecycle. The topology turns both into {@code status} upserts.
 */
final class TurnStatusReporter {

    private final Consumer<StreamPayload> publish;
    private boolean interrupted;

    TurnStatusReporter(Consumer<StreamPayload> publish) {
        this.publish = publish;
    }

    void retrying(int nextAttempt, Duration delay, ErrorInfo why) {
        turn(new TurnStatus(TurnActivity.RETRYING, nextAttempt, delay.toMillis(), null, null, why, null, null));
    }

    void fallback(String fromModel, String toModel, ErrorInfo why) {
        turn(new TurnStatus(TurnActivity.FALLBACK, null, null, fromModel, toModel, why, null, null));
    }

    void stalled(ErrorInfo why) {
        turn(new TurnStatus(TurnActivity.STALLED, null, null, null, null, why, null, null));
    }

    void compacting(long contextTokens, long contextWindow) {
        turn(new TurnStatus(TurnActivity.COMPACTING, null, null, null, null, null, contextTokens, contextWindow));
    }

    /** What one model call used and cost; not an interruption. */
    void stepCompleted(int step, String model, StreamPayload.Usage usage) {
        publish.accept(new TurnStatus(TurnActivity.STEP_COMPLETED, null, null, null, null, null, null, null, step, model,
                usage));
    }

    /** A step stopped at the output token limit; the model is asked to go on. */
    void continuing() {
        turn(new TurnStatus(TurnActivity.CONTINUING, null, null, null, null, null, null, null));
    }

    /** A model call starts: after a retry, fallback, stall or compaction, the turn is running again. */
    void callStarting(int attempt) {
        if (interrupted) {
            interrupted = false;
            publish.accept(new TurnStatus(TurnActivity.RUNNING, attempt, null, null, null, null, null, null));
        }
    }

    private void turn(TurnStatus status) {
        interrupted = true;
        publish.accept(status);
    }

    void toolAwaitingApproval(ToolCallRequest call) {
        tool(call, ToolState.AWAITING_APPROVAL, null, null, null);
    }

    void toolRunning(ToolCallRequest call, long startedAt) {
        tool(call, ToolState.RUNNING, startedAt, null, null);
    }

    void toolFinished(ToolCallRequest call, ToolResult result) {
        tool(call, result.success() ? ToolState.COMPLETED : ToolState.ERROR, positive(result.startedAt()),
                positive(result.completedAt()), result.error());
    }

    /** The call will never have a result: the turn was cancelled or stopped waiting. */
    void toolEnded(ToolCallRequest call, ToolState status, Long startedAt, long endedAt, ErrorInfo why) {
        tool(call, status, startedAt, endedAt, why);
    }

    private void tool(ToolCallRequest call, ToolState status, Long startedAt, Long completedAt, ErrorInfo error) {
        publish.accept(new ToolStatus(call.itemId(), call.callId(), call.name(), status, startedAt, completedAt, error));
    }

    private static Long positive(long millis) {
        return millis > 0 ? millis : null;
    }
}
