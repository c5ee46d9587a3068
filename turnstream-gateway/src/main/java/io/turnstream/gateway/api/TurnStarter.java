package io.turnstream.gateway.api;

import io.turnstream.gateway.turn.TurnRequest;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.runtime.TraceContext;

/** Accepts turns: what the routes that start one need of the gateway. */
public interface TurnStarter {

    /**
     * Accepts a validated request: returns once the turn is on {@code llm.turn-requests}; the gateway that
     * owns the thread's partition runs it. Turns over the gateway's or the tenant's limits throw
     * {@link io.turnstream.gateway.http.ApiError}.
     *
     * @param tenantId the caller's tenant; null when the gateway runs without keys
     * @param trace the trace context every record of the turn carries
     * @param idempotent the request's {@code Idempotency-Key}, which names the turn; null without one
     */
    TurnStatus startTurn(TurnRequest request, String tenantId, TraceContext trace, IdempotentStart idempotent);

    /** Accepts a request sent without an {@code Idempotency-Key}. */
    default TurnStatus startTurn(TurnRequest request, String tenantId, TraceContext trace) {
        return startTurn(request, tenantId, trace, null);
    }
}
