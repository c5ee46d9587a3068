package io.turnstream.model;

import com.fasterxml.jackson.annotation.JsonFormat;
import com.fasterxml.jackson.databind.JsonNode;

/**
 * A command on {@code llm.control}, keyed by turn id: {@code cancel} (reason), {@code approval}
 * (callId, approved, reason, remember: a user's decision on a tool call that waits for approval;
 * {@code remember: true} with an approval allows that tool for the rest of the thread) or
 * {@code tool_started} (callId, at: the tool executor started running the call) or
 * {@code approval_requested} (callId, toolName, arguments, and why it asks as {@code reason}:
 * {@link #ASK_POLICY} or {@link #ASK_DOOM_LOOP}; the tool executor holds the call until a decision).
 */
public record ControlMessage(@JsonFormat(with = JsonFormat.Feature.READ_UNKNOWN_ENUM_VALUES_AS_NULL) Type type, String turnId,
                             String reason, String callId, Boolean approved, Long at, String toolName, JsonNode arguments,
                             Boolean remember) {

    /** Why an {@code approval_requested} asks: the tool's approval policy is {@code ask}. */
    public static final String ASK_POLICY = "policy";
    /** Why an {@code approval_requested} asks: the call repeats the same call too often in the turn (doom-loop guard). */
    public static final String ASK_DOOM_LOOP = "doom_loop";

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

    public ControlMessage(Type type, String turnId, String reason, String callId, Boolean approved, Long at) {
        this(type, turnId, reason, callId, approved, at, null, null, null);
    }

    public static ControlMessage cancel(String turnId, String reason) {
        return new ControlMessage(Type.CANCEL, turnId, reason);
    }

    public static ControlMessage approval(String turnId, String callId, boolean approved, String reason) {
        return new ControlMessage(Type.APPROVAL, turnId, reason, callId, approved, null);
    }

    /** An approval that also allows the call's tool for the rest of the thread when {@code remember}. */
    public static ControlMessage approval(String turnId, String callId, boolean approved, String reason,
                                          boolean remember) {
        return new ControlMessage(Type.APPROVAL, turnId, reason, callId, approved, null, null, null,
                remember ? Boolean.TRUE : null);
    }

    /** @param why {@link #ASK_POLICY} or {@link #ASK_DOOM_LOOP} */
    public static ControlMessage approvalRequested(String turnId, String callId, String toolName, JsonNode arguments,
                                                   String why) {
        return new ControlMessage(Type.APPROVAL_REQUESTED, turnId, why, callId, null, null, toolName, arguments, null);
    }

    public static ControlMessage toolStarted(String turnId, String callId, long at) {
        return new ControlMessage(Type.TOOL_STARTED, turnId, null, callId, null, at);
    }
}
