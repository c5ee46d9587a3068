package io.turnstream.gateway.api;

import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.gateway.view.TurnSnapshot;
import java.util.Optional;

/** What the routes of one turn need of the gateway: cancel it and show it. */
public interface TurnControl {

    /** What a cancel request found. */
    enum CancelOutcome {
        /** The cancel is on {@code llm.control}: the gateway that runs the turn stops it. */
        CANCELLING,
        /** The turn already finished here. */
        FINISHED
    }

    /**
     * Cancels a turn wherever it runs: the cancel goes to the control topic, where the gateway running
     * the turn stops it (status {@code aborted}, open items closed) and the tool executor aborts its
     * running tools.
     */
    CancelOutcome cancel(String turnId, String reason);

    /** The turn's status when this gateway runs it or finished it. */
    Optional<TurnStatus> status(String turnId);

    /**
     * The turn as a user interface sees it: its upserts folded into the current state (from Kafka, so
     * also for turns other gateways run), with this gateway's own status when it runs the turn.
     */
    Optional<TurnSnapshot> snapshot(String turnId);
}
