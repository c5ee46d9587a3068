package io.turnstream.gateway.http;

import io.javalin.Javalin;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.javalin.json.JavalinJackson;
import io.turnstream.gateway.openai.OpenAiErrors;
import io.turnstream.model.Json;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gateway's HTTP server (Javalin). It knows no routes of its own: each feature registers its
 * routes (the turns API, the SSE feeds, the chat endpoint) through {@link Routes}. Every request, to
 * whichever route, first passes the guard (keys, origins, body type and size), which registers its
 * before-handler first.
 * Errors are JSON: {@code {"error": "..."}} with the status of an {@link ApiError}, 404 for unknown
 * paths, 500 (logged, details withheld) for anything unexpected.
 */
public final class GatewayServer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(GatewayServer.class);

    /** A set of routes to serve. */
    @FunctionalInterface
    public interface Routes {
        void register(RoutesConfig routes);
    }

    /** Marks a response an {@link ApiError} already wrote, so the 404 mapper leaves it alone. */
    private static final String ANSWERED = "turnstream.answered";

    private final Javalin app;
    private final String host;

    private GatewayServer(Javalin app, String host) {
        this.app = app;
        this.host = host;
    }

    /**
     * @param port 0 for a free one
     * @param maxBodyBytes the largest request body read at all
     * @param guard the checks every request passes before any route
     */
    public static GatewayServer start(String host, int port, long maxBodyBytes, Routes guard, List<Routes> routes) {
        Javalin app = Javalin.create(config -> {
            config.startup.showJavalinBanner = false;
            config.startup.showOldJavalinVersionWarning = false;
            config.jsonMapper(new JavalinJackson(Json.MAPPER, false));
            config.http.defaultContentType = "application/json";
            config.http.maxRequestSize = maxBodyBytes;
            config.routes.exception(ApiError.class, (e, ctx) -> {
                String path = pathOrNull(ctx);
                if (path == null) {
                    LOG.debug("{} after its client left", e.getMessage());
                    return;
                }
                ctx.attribute(ANSWERED, true);
                e.headers().forEach(ctx::header);
                ctx.status(e.status()).json(errorBody(path, e.status(), e.getMessage()));
            });
            config.routes.exception(Exception.class, (e, ctx) -> {
                String path = pathOrNull(ctx);
                if (path == null) {
                    LOG.debug("a request failed after its client left", e);
                    return;
                }
                LOG.error("{} {} failed", ctx.method(), path, e);
                ctx.status(500).json(errorBody(path, 500, "internal error; see the gateway's log"));
            });
            config.routes.error(404, ctx -> {
                if (ctx.attribute(ANSWERED) == null) {
                    ctx.json(error("no route " + ctx.method() + " " + ctx.path()));
                }
            });
            guard.register(config.routes);
            routes.forEach(r -> r.register(config.routes));
        });
        app.start(host, port);
        return new GatewayServer(app, host);
    }

    /**
     * The request's path, or null once Jetty recycled the request: a stream whose client left can still fail
     * afterwards (a heartbeat's write), and then there is no one to answer and nothing worth a warning.
     */
    private static String pathOrNull(Context ctx) {
        try {
            return ctx.path();
        } catch (RuntimeException recycled) {
            return null;
        }
    }

    /** The OpenAI-compatible routes answer errors in OpenAI's shape, every other route {@code {"error": "..."}}. */
    private static Object errorBody(String path, int status, String message) {
        return OpenAiErrors.applies(path) ? OpenAiErrors.body(status, message) : error(message);
    }

    public static Map<String, String> error(String message) {
        return Map.of("error", message);
    }

    public int port() {
        return app.port();
    }

    public String baseUrl() {
        String shown = "0.0.0.0".equals(host) ? "127.0.0.1" : host;
        return "http://" + shown + ":" + port();
    }

    @Override
    public void close() {
        app.stop();
    }
}
