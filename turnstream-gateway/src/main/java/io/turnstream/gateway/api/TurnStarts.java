package io.turnstream.gateway.api;

import io.javalin.http.Context;
import io.turnstream.gateway.security.RequestGuard;
import io.turnstream.gateway.turn.TurnRequest;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.runtime.TraceContext;

/**
 * How every route that starts a turn starts it from an HTTP request: as the caller's tenant, in the
 * request's trace (answered in {@code traceparent}), once per {@code Idempotency-Key} (a replay is
 * answered with {@code Idempotent-Replayed: true} and the first request's turn).
 */
public final class TurnStarts {

    public static final String REPLAYED_HEADER = "Idempotent-Replayed";

    private final TurnStarter starter;
    private final IdempotencyKeys keys;

    public TurnStarts(TurnStarter starter, IdempotencyKeys keys) {
        this.starter = starter;
        this.keys = keys;
    }

    /** Starts the turn {@code request} (parsed from {@code ctx}'s body) asks for, or finds the one its key started. */
    public TurnStatus start(Context ctx, TurnRequest request) {
        TraceContext trace = TraceContext.fromHttp(ctx::header);
        String tenant = RequestGuard.tenant(ctx);
        IdempotencyKeys.Started started = keys.start(tenant, ctx.header(IdempotencyKeys.HEADER),
                ctx.method() + " " + ctx.path() + "\n" + ctx.body(),
                keyed -> starter.startTurn(request, tenant, trace, keyed));
        if (started.replayed()) {
            ctx.header(REPLAYED_HEADER, "true");
        } else {
            // the turn's trace, also when the request brought none and a fresh one was started
            ctx.header(TraceContext.TRACEPARENT, trace.traceparent());
        }
        return started.turn();
    }
}
