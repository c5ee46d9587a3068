package io.turnstream.runtime;

import io.javalin.Javalin;
import io.turnstream.model.Json;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Liveness and readiness over HTTP for a long-running service: {@code GET /health} answers 200 when
 * the service is ready to do its work and 503 otherwise; {@code GET /health/live} answers 503 only
 * when the service is dead and should be restarted. The body is the service's status as JSON.
 * {@code GET /metrics/prometheus} serves the service's metrics (see {@link ServiceMetrics}).
 */
public final class HealthServer implements AutoCloseable {

    /** What a service reports about itself; {@code details} is added to the JSON body. */
    public record Status(boolean ready, boolean live, Map<String, Object> details) {
    }

    private final Javalin server;

    private HealthServer(Javalin server) {
        this.server = server;
    }

    /**
     * Where health and metrics listen unless configured otherwise: loopback, so metrics (which name
     * topics, tenants' counts, the service's internals) never reach a public network by default.
     */
    public static final String LOOPBACK = "127.0.0.1";
    /** The setting of the address the topology's and the tool executor's health endpoints listen on. */
    public static final String HOST = "turnstream.health.host";

    /** {@link #HOST}, else {@link #LOOPBACK}. */
    public static String host(Settings settings) {
        return settings.get(HOST, LOOPBACK);
    }

    /** Starts serving health and metrics on {@code host}; {@code port} 0 picks a free one (see {@link #port()}). */
    public static HealthServer start(String host, int port, Supplier<Status> status, ServiceMetrics metrics) {
        return start(host, port, status, metrics, Map.of());
    }

    /**
     * A management server: health, the metrics, plus more read-only JSON routes (such as a service's own counters).
     *
     * @param host the address to listen on, e.g. {@link #LOOPBACK}; {@code 0.0.0.0} for all interfaces
     * @param jsonRoutes path -> what it answers, as JSON
     */
    public static HealthServer start(String host, int port, Supplier<Status> status, ServiceMetrics metrics,
                                     Map<String, Supplier<Object>> jsonRoutes) {
        Javalin server = Javalin.create(config -> {
            config.startup.showJavalinBanner = false;
            config.startup.showOldJavalinVersionWarning = false;
            config.jetty.port = port;
            config.jetty.host = host;
            jsonRoutes.forEach((path, answer) -> config.routes.get(path,
                    ctx -> ctx.contentType("application/json").result(Json.toString(answer.get()))));
            config.routes.get("/health", ctx -> {
                Status now = status.get();
                ctx.status(now.ready() ? 200 : 503).contentType("application/json").result(body(now));
            });
            config.routes.get("/health/live", ctx -> {
                Status now = status.get();
                ctx.status(now.live() ? 200 : 503).contentType("application/json").result(body(now));
            });
            metrics.serve(config.routes);
        });
        try {
            server.start();
        } catch (RuntimeException e) {
            throw new IllegalStateException("cannot serve /health on port " + port + ": " + Failures.describe(e), e);
        }
        return new HealthServer(server);
    }

    public int port() {
        return server.port();
    }

    @Override
    public void close() {
        server.stop();
    }

    private static String body(Status status) {
        Map<String, Object> body = new java.util.LinkedHashMap<>();
        body.put("status", status.ready() ? "UP" : "DOWN");
        body.put("live", status.live());
        body.putAll(status.details());
        return Json.toString(body);
    }
}
