package io.turnstream.gateway.turn;

import io.turnstream.model.ResponseStatus;
import io.turnstream.model.WireValue;

/** Where a turn is, as the API says it ({@code status} of {@code GET /v1/turns/{turnId}}): running, or how it ended. */
public enum TurnPhase implements WireValue {
    RUNNING, COMPLETE, ERROR, ABORTED;

    /** The phase of a turn whose response ended with {@code status}. */
    public static TurnPhase endedAs(ResponseStatus status) {
        return switch (status) {
            case COMPLETE -> COMPLETE;
            case ERROR -> ERROR;
            case ABORTED -> ABORTED;
        };
    }

    public boolean ended() {
        return this != RUNNING;
    }

    @Override
    public String toString() {
        return wire();
    }
}
