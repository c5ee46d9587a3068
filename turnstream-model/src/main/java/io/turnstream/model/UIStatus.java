package io.turnstream.model;

/**
 * A status of a running turn ({@code turn_status}: retrying, fallback, stalled, compacting, running,
 * step_completed with the step's usage)
 * or of one of its tool calls ({@code tool_status}: pending, awaiting_approval, running, completed,
 * error, aborted). It is not a lifecycle event: the turn goes on after it. Only the fields of its
 * kind are set; see {@link StreamPayload.TurnStatus} and {@link StreamPayload.ToolStatus}. {@code status} is
 * the wire form of a {@link TurnActivity} or a {@link ToolState}, by {@code type}.
 */
public record UIStatus(UiPayloadType type, String turnId, String threadId, String status, String itemId, String callId,
                       String toolName, Integer attempt, Long delayMs, String fromModel, String toModel,
                       Long startedAt, Long completedAt, Long contextTokens, Long contextWindow, ErrorInfo error,
                       Integer step, String modelId, UITurnEvent.Usage usage)
        implements UiPayload {

    public UIStatus {
        UiPayload.requireTypeOf(UIStatus.class, type);
    }

    /** The UI's view of a turn's {@code turn_status}, with its step's usage in the UI's form. */
    public static UIStatus ofTurn(String turnId, String threadId, StreamPayload.TurnStatus status, UITurnEvent.Usage usage) {
        return new UIStatus(UiPayloadType.TURN_STATUS, turnId, threadId, status.status().wire(), null, null, null,
                status.attempt(), status.delayMs(), status.fromModel(), status.toModel(), null, null,
                status.contextTokens(), status.contextWindow(), status.error(), status.step(), status.modelId(), usage);
    }

    /** The UI's view of a tool call's {@code tool_status}. */
    public static UIStatus ofTool(String turnId, String threadId, StreamPayload.ToolStatus tool) {
        return new UIStatus(UiPayloadType.TOOL_STATUS, turnId, threadId, tool.status().wire(), tool.itemId(), tool.callId(),
                tool.toolName(), null, null, null, null, tool.startedAt(), tool.completedAt(), null, null, tool.error(),
                null, null, null);
    }

    @Override
    public String stateKey() {
        return type == UiPayloadType.TOOL_STATUS ? "tool-status/" + callId : "status";
    }
}
