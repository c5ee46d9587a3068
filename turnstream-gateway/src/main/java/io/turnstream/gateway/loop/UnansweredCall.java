package io.turnstream.gateway.loop;

import io.turnstream.gateway.provider.ErrorCodes;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.ToolState;

/**
 * Why a tool call gets no result from the executor, as its lifecycle status, error and output text: every
 * call still ends with an output that says so, with success false.
 */
record UnansweredCall(ToolState status, ErrorInfo error, String output) {

    /** The turn was cancelled (the reason may be unknown). */
    static UnansweredCall aborted(String reason) {
        return new UnansweredCall(ToolState.ABORTED,
                ErrorInfo.of(ErrorCodes.TOOL_CALL_ABORTED, reason == null ? "cancelled" : reason),
                "aborted" + (reason == null ? "" : ": " + reason));
    }
}
