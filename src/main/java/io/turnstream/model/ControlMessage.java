package io.turnstream.model;

/** A command on {@code llm.control}, keyed by turn id. */
public record ControlMessage(String type, String turnId, String reason) {

    public static final String CANCEL = "cancel";

    public static ControlMessage cancel(String turnId, String reason) {
        return new ControlMessage(CANCEL, turnId, reason);
    }
}
