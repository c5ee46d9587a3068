package io.turnstream.gateway.chat;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.turnstream.gateway.api.TurnStarts;
import io.turnstream.gateway.http.EventStream;
import io.turnstream.gateway.http.GatewayServer;
import io.turnstream.gateway.http.JsonBody;
import io.turnstream.gateway.security.RequestGuard;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.gateway.view.StreamPosition;
import io.turnstream.gateway.view.TurnEventsApi;
import io.turnstream.gateway.view.TurnViews;
import java.io.IOException;
import java.util.Optional;

/**
 * The Vercel AI SDK's chat endpoint: {@code POST /api/chat} starts a turn (the chat id is its thread)
 * and answers with the turn as a UI message stream; {@code GET /api/chat/{chatId}/stream} replays the
 * chat's running turn from its start (204 when none runs, or it is another tenant's). Both streams are
 * built from what every gateway reads from Kafka, so a client may be served by any instance.
 */
public final class ChatApi implements GatewayServer.Routes {

    /** The header by which the AI SDK recognises the protocol. */
    static final String PROTOCOL_HEADER = "x-vercel-ai-ui-message-stream";

    private final TurnStarts starter;
    private final TurnViews views;

    public ChatApi(TurnStarts starter, TurnViews views) {
        this.starter = starter;
        this.views = views;
    }

    @Override
    public void register(RoutesConfig routes) {
        routes.post("/api/chat", this::chat);
        routes.get("/api/chat/{chatId}/stream", this::resume);
    }

    private void chat(Context ctx) throws IOException {
        TurnStatus turn = starter.start(ctx, ChatRequest.parse(ctx.body()));
        stream(ctx, turn.turnId());
    }

    private void resume(Context ctx) throws IOException {
        Optional<String> running = views.runningTurnOf(
                JsonBody.requireId("the chat id", ctx.pathParam("chatId")), RequestGuard.tenant(ctx));
        if (running.isEmpty()) {
            ctx.status(204);
            return;
        }
        stream(ctx, running.get());
    }

    private void stream(Context ctx, String turnId) throws IOException {
        ctx.header(PROTOCOL_HEADER, "v1");
        EventStream client = TurnEventsApi.openEventStream(ctx);
        views.subscribe(turnId, StreamPosition.START, client, new UiMessageStream(turnId));
    }
}
