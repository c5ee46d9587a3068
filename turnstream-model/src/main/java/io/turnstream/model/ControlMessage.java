package io.turnstream.model;

import com.fasterxml.jackson.annotation.JsonFormat;

/**
 * A command on {@code llm.control}, keyed by turn id: {@code cancel} (reason), {@code approval}
 * (callId, approved, reason: a user's decision on a tool call that waits for approval) or
 * {@code tool_started} (callId, at: the tool executor started running the call) or
 * {@code approval_requested} (callId: the tool executor holds the call until a decision).
 */
public record ControlMessage(@JsonFormat(with = JsonFormat.Feature.READ_UNKNOWN_ENUM_VALUES_AS_NULL) Type type, String turnId, String reason, String callId, Boolean approved, Long at) {

    /** The commands. A type this version does not know (a newer peer's) reads as null, and readers skip it. */
    public enum Type implements WireValue {
        CANCEL, APPROVAL, TOOL_STARTED, APPROVAL_REQUESTED;

        @Override
        public String toString() {
            return wire();
        }
    }

    public ControlMessage(Type type, String turnId, String reason) {
        this(type, turnId, reason, null, null, null);
    }

    public static ControlMessage cancel(String turnId, String reason) {
        return new ControlMessage(Type.CANCEL, turnId, reason);
    }

    public static ControlMessage approval(String turnId, String callId, boolean approved, String reason) {
        return new ControlMessage(Type.APPROVAL, turnId, reason, callId, approved, null);
    }

    public static ControlMessage approvalRequested(String turnId, String callId) {
        return new ControlMessage(Type.APPROVAL_REQUESTED, turnId, null, callId, null, null);
    }

    public static ControlMessage toolStarted(String turnId, String callId, long at) {
        return new ControlMessage(Type.TOOL_STARTED, turnId, null, callId, null, at);
    }
}
