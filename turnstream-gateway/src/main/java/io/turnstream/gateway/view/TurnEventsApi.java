package io.turnstream.gateway.view;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.turnstream.gateway.http.ApiError;
import io.turnstream.gateway.http.EventStream;
import io.turnstream.gateway.http.GatewayServer;
import io.turnstream.gateway.security.RequestGuard;
import io.turnstream.model.UiPayloadType;
import java.io.InputStream;
import java.util.Map;

/**
 * {@code GET /v1/turns/{turnId}/events}: a turn's upserts and appends as server-sent events (see
 * {@link TurnEventsEncoder}), resumable with {@code Last-Event-ID} (a {@link StreamPosition}); and the
 * web view at {@code /}.
 */
public final class TurnEventsApi implements GatewayServer.Routes {

    private static final Map<String, String> WEB_FILES = Map.of(
            "/", "index.html", "/app.js", "app.js", "/app.css", "app.css");

    private final TurnViews views;

    public TurnEventsApi(TurnViews views) {
        this.views = views;
    }

    @Override
    public void register(RoutesConfig routes) {
        routes.get("/v1/turns/{turnId}/events", this::events);
        WEB_FILES.forEach((path, file) -> routes.get(path, ctx -> webFile(ctx, file)));
    }

    private void events(Context ctx) throws Exception {
        String turnId = ctx.pathParam("turnId");
        StreamPosition from = lastEventId(ctx);
        if (alreadyFinished(turnId, from.upsertSeq())) {
            // 204 tells an EventSource that the stream is over: it stops reconnecting
            ctx.status(204);
            return;
        }
        views.subscribe(turnId, from, openEventStream(ctx));
    }

    /**
     * Starts a {@code text/event-stream} response for any client. Javalin's SseHandler serves only
     * clients that send {@code Accept: text/event-stream}; curl and fetch() do not, so streams are
     * opened here. Each counts against the caller's tenant's open streams until it closes (429 over the limit).
     */
    public static EventStream openEventStream(Context ctx) throws java.io.IOException {
        Runnable closeStream = RequestGuard.openStream(ctx);
        try {
            return EventStream.open(ctx, closeStream);
        } catch (java.io.IOException | RuntimeException notOpened) {
            closeStream.run();
            throw notOpened;
        }
    }

    /** {@code Last-Event-ID} (an EventSource's reconnect), else {@code ?lastEventId=}, else the start. */
    private static StreamPosition lastEventId(Context ctx) {
        String value = ctx.header("Last-Event-ID");
        if (value == null || value.isBlank()) {
            value = ctx.queryParam("lastEventId");
        }
        return value == null || value.isBlank() ? StreamPosition.START : StreamPosition.parse(value);
    }

    private boolean alreadyFinished(String turnId, long afterSeq) {
        return afterSeq > 0 && views.snapshot(turnId, null)
                .map(snapshot -> snapshot.turn() != null && snapshot.turn().type() != UiPayloadType.TURN_STARTED
                        && snapshot.seq() <= afterSeq)
                .orElse(false);
    }

    private static void webFile(Context ctx, String file) {
        InputStream content = TurnEventsApi.class.getResourceAsStream("/web/" + file);
        if (content == null) {
            throw ApiError.notFound("the web view is not in this build");
        }
        String type = file.endsWith(".html") ? "text/html; charset=utf-8"
                : file.endsWith(".js") ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8";
        ctx.contentType(type).result(content);
    }
}
