package io.turnstream.model;

/**
 * One step of a tool call's lifecycle ({@code tool_status.status}): {@code pending} (sent to the executor),
 * {@code awaiting_approval}, {@code running}, then {@code completed}, {@code error} or {@code aborted}.
 */
public enum ToolState implements WireValue {
    PENDING, AWAITING_APPROVAL, RUNNING, COMPLETED, ERROR, ABORTED;

    @Override
    public String toString() {
        return wire();
    }
}
