package io.turnstream.model;

/** How a response (a step, or the whole turn) ended: {@code response_done.status} and {@code turn_completed.status}. */
public enum ResponseStatus implements WireValue {
    COMPLETE, ERROR, ABORTED;

    @Override
    public String toString() {
        return wire();
    }
}
