package io.turnstream.model;

/**
 * A command on {@code llm.control}, keyed by turn id: {@code cancel} (reason), {@code approval}
 * (callId, approved, reason: a user's decision on a tool call that waits for approval) or
 * {@code tool_started} (callId, at: the tool executor started running the call) or
 * {@code approval_requested} (callId: the tool executor holds the call until a decision).
 */
public record ControlMessage(String type, String turnId, String reason, String callId, Boolean approved, Long at) {

    public static final String CANCEL = "cancel";
    public static final String APPROVAL = "approval";
    public static final String TOOL_STARTED = "tool_started";
    public static final String APPROVAL_REQUESTED = "approval_requested";

    public ControlMessage(String type, String turnId, String reason) {
        this(type, turnId, reason, null, null, null);
    }

    public static ControlMessage cancel(String turnId, String reason) {
        return new ControlMessage(CANCEL, turnId, reason);
    }

    public static ControlMessage approval(String turnId, String callId, boolean approved, String reason) {
        return new ControlMessage(APPROVAL, turnId, reason, callId, approved, null);
    }

    public static ControlMessage approvalRequested(String turnId, String callId) {
        return new ControlMessage(APPROVAL_REQUESTED, turnId, null, callId, null, null);
    }

    public static ControlMessage toolStarted(String turnId, String callId, long at) {
        return new ControlMessage(TOOL_STARTED, turnId, null, callId, null, at);
    }
}
