package io.turnstream.model;

/**
 * What the gateway is doing for a running turn between items ({@code turn_status.status}); see
 * {@link StreamPayload.TurnStatus} for the fields each one sets.
 */
public enum TurnActivity implements WireValue {
    RETRYING, FALLBACK, STALLED, COMPACTING,
    /** The model is being called again after one of the others. */
    RUNNING,
    /** One model call ended; carries what it used and cost. */
    STEP_COMPLETED,
    /** A step stopped at the output token limit and the model is asked to go on; its text joins the same message. */
    CONTINUING;

    @Override
    public String toString() {
        return wire();
    }
}
