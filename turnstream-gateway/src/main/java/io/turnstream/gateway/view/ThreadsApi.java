package io.turnstream.gateway.view;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.turnstream.gateway.http.ApiError;
import io.turnstream.gateway.http.GatewayServer;
import io.turnstream.gateway.http.JsonBody;
import io.turnstream.gateway.security.RequestGuard;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code GET /v1/threads/{threadId}}: the thread's turns, earliest first, each with its status and the
 * current state of its items (as {@code GET /v1/turns/{turnId}} shows one turn), from what every gateway
 * reads from Kafka. A thread is its tenant's: another tenant's of the same name is not found.
 */
public final class ThreadsApi implements GatewayServer.Routes {

    private final TurnViews views;

    public ThreadsApi(TurnViews views) {
        this.views = views;
    }

    @Override
    public void register(RoutesConfig routes) {
        routes.get("/v1/threads/{threadId}", this::thread);
    }

    private void thread(Context ctx) {
        String threadId = JsonBody.requireId("the thread id", ctx.pathParam("threadId"));
        List<TurnSnapshot> turns = views.threadTurns(RequestGuard.tenant(ctx), threadId);
        if (turns.isEmpty()) {
            throw ApiError.notFound("no thread " + threadId + " (or none of its turns is still kept)");
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("threadId", threadId);
        body.put("turns", turns);
        ctx.json(body);
    }
}
