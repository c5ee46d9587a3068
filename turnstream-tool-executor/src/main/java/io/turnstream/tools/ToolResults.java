package io.turnstream.tools;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.ToolCall;
import io.turnstream.model.ToolResult;

/** Builds the one {@link ToolResult} of a call; a failure carries its message both as output (for the model) and as error. */
final class ToolResults {

    static final String ABORTED_BY_USER = "Tool execution was aborted: user interrupted";
    static final String ABORTED_BY_SIBLING = "Tool execution was aborted: a sibling tool call failed";

    private ToolResults() {
    }

    static ToolResult success(ToolCall call, JsonNode output, long startedAt, long completedAt) {
        return new ToolResult(call.callId(), call.turnId(), call.toolName(), true, output, null, startedAt, completedAt);
    }

    static ToolResult failure(ToolCall call, String code, String message, long startedAt, long completedAt) {
        return new ToolResult(call.callId(), call.turnId(), call.toolName(), false, TextNode.valueOf(message),
                ErrorInfo.of(code, message), startedAt, completedAt);
    }

    /** A failure of a call that never ran: it starts and completes {@code at}. */
    static ToolResult refusal(ToolCall call, String code, String message, long at) {
        return failure(call, code, message, at, at);
    }
}
