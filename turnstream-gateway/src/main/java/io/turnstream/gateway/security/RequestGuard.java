package io.turnstream.gateway.security;

import com.fasterxml.jackson.databind.JsonNode;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.javalin.http.HandlerType;
import io.turnstream.gateway.http.ApiError;
import io.turnstream.gateway.http.GatewayServer;
import io.turnstream.gateway.http.JsonBody;
import io.turnstream.model.Json;
import java.io.IOException;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The checks every request to the gateway's public API passes before any route sees it, whoever added the
 * route: browser origin (CORS), the API key and its tenant, the body's type and size, and for the routes
 * of one turn that the turn is the caller's. A refusal is an {@link ApiError}: JSON with a clear message.
 */
public final class RequestGuard implements GatewayServer.Routes {

    /** The context attribute holding the caller's tenant (absent when the gateway runs without keys). */
    private static final String TENANT = "turnstream.tenant";
    /** The context attribute holding the guard's {@link TenantTraffic}, for {@link #openStream}. */
    private static final String TRAFFIC = "turnstream.traffic";
    /** Paths whose next segment is a turn id: the turn must be the caller's. */
    private static final String TURN_PATH = "/v1/turns/";
    private static final Set<HandlerType> WITH_BODY = Set.of(HandlerType.POST, HandlerType.PUT, HandlerType.PATCH);
    private static final String ALLOWED_HEADERS = "Authorization, Content-Type, Last-Event-ID, Idempotency-Key, "
            + "x-turnstream-thread-id";
    /** Host names only this machine answers to; a name such as 127.example.com is not one of them. */
    private static final Pattern LOOPBACK_HOST = Pattern.compile("localhost|127(\\.\\d{1,3}){3}|\\[::1\\]");

    private final SecurityConfig config;
    private final TurnOwnership ownership;
    private final TenantTraffic traffic;

    public RequestGuard(SecurityConfig config, TurnOwnership ownership) {
        this.config = config;
        this.ownership = ownership;
        this.traffic = TenantTraffic.of(config);
    }

    /**
     * Counts an event stream the route is about to open against the caller's tenant's limit (429 over it).
     *
     * @return what to run when the stream closes
     */
    public static Runnable openStream(Context ctx) {
        TenantTraffic traffic = ctx.attribute(TRAFFIC);
        return traffic == null ? () -> { } : traffic.openStream(tenant(ctx));
    }

    /** The caller's tenant, or null when the gateway runs without keys. */
    public static String tenant(Context ctx) {
        return ctx.attribute(TENANT);
    }

    public long maxBodyBytes() {
        return config.maxBodyBytes();
    }

    @Override
    public void register(RoutesConfig routes) {
        routes.before(this::check);
    }

    private void check(Context ctx) {
        if (crossOrigin(ctx)) {
            return;
        }
        requireLocalHostName(ctx);
        authenticate(ctx);
        if (config.keys().configured()) {
            // limits between tenants; a gateway without keys has one user, on loopback
            traffic.request(tenant(ctx));
            ctx.attribute(TRAFFIC, traffic);
        }
        if (WITH_BODY.contains(ctx.method())) {
            checkBody(ctx);
        }
        String turnId = turnIdOf(ctx.path());
        if (turnId != null) {
            JsonBody.requireId("the turn id", turnId);
            if (!ownership.visibleNow(tenant(ctx), turnId)) {
                // the route runs once the future completes; the wait holds no request thread
                String caller = tenant(ctx);
                ctx.future(() -> ownership.whenVisible(caller, turnId));
            }
        }
    }

    /**
     * A request from a web page of another origin is refused unless that origin is allowed; an allowed one
     * gets the CORS headers, and its preflight is answered here.
     *
     * @return true when the request was a preflight and is answered
     */
    private boolean crossOrigin(Context ctx) {
        String origin = ctx.header("Origin");
        if (origin == null || sameOrigin(origin, ctx.header("Host"))) {
            return false;
        }
        boolean preflight = ctx.method() == HandlerType.OPTIONS && ctx.header("Access-Control-Request-Method") != null;
        if (!config.allowedOrigins().contains(origin)) {
            throw new ApiError(403, (preflight ? "preflight refused: " : "") + "origin " + origin
                    + " may not call this gateway (turnstream.gateway.cors.allowed-origins)");
        }
        ctx.header("Access-Control-Allow-Origin", origin);
        ctx.header("Vary", "Origin");
        ctx.header("Access-Control-Expose-Headers", "Retry-After, traceparent, Idempotent-Replayed, x-turnstream-turn-id, "
                + "x-turnstream-thread-id");
        if (!preflight) {
            return false;
        }
        ctx.header("Access-Control-Allow-Methods", "GET, POST");
        ctx.header("Access-Control-Allow-Headers", ALLOWED_HEADERS);
        ctx.header("Access-Control-Max-Age", "600");
        ctx.status(204);
        ctx.skipRemainingHandlers();
        return true;
    }

    private static boolean sameOrigin(String origin, String host) {
        int scheme = origin.indexOf("://");
        return host != null && scheme > 0 && origin.substring(scheme + 3).equalsIgnoreCase(host);
    }

    /**
     * Without keys the gateway listens on loopback only; a page that rebinds its own DNS name to 127.0.0.1
     * would still reach it, with its own name in {@code Host}. So without keys only loopback names are served.
     */
    private void requireLocalHostName(Context ctx) {
        if (config.keys().configured() || config.insecure()) {
            return;
        }
        String host = hostName(ctx.header("Host"));
        if (!LOOPBACK_HOST.matcher(host).matches()) {
            throw new ApiError(403, "this gateway has no API keys and serves only requests addressed to localhost");
        }
    }

    private static String hostName(String hostHeader) {
        if (hostHeader == null) {
            return "";
        }
        String host = hostHeader.strip().toLowerCase(Locale.ROOT);
        int port = host.lastIndexOf(':');
        return port > host.lastIndexOf(']') ? host.substring(0, port) : host;
    }

    private void authenticate(Context ctx) {
        if (!config.keys().configured()) {
            return;
        }
        String authorization = ctx.header("Authorization");
        if (authorization == null || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            throw unauthorized("an API key is needed: send Authorization: Bearer <key>");
        }
        String tenant = config.keys().tenantOf(authorization.substring(7).strip())
                .orElseThrow(() -> unauthorized("the API key is not valid"));
        ctx.attribute(TENANT, tenant);
    }

    private static ApiError unauthorized(String message) {
        return new ApiError(401, message, Map.of("WWW-Authenticate", "Bearer realm=\"turnstream\""));
    }

    /** Only JSON bodies (a form or text/plain is what a cross-site page can send without asking), within the limits. */
    private void checkBody(Context ctx) {
        String type = ctx.header("Content-Type");
        String mime = type == null ? "" : type.split(";", 2)[0].strip().toLowerCase(Locale.ROOT);
        long declared = ctx.req().getContentLengthLong();
        if (declared > config.maxBodyBytes()) {
            throw tooLarge("the body is " + declared + " bytes; the limit is " + config.maxBodyBytes()
                    + " (turnstream.gateway.max-body-bytes)");
        }
        if (!mime.equals("application/json") && (type != null || declared != 0)) {
            throw new ApiError(415, "the body must be JSON, sent with Content-Type: application/json"
                    + (type == null ? "" : "; got " + type));
        }
        byte[] body;
        try {
            body = ctx.bodyAsBytes();
        } catch (RuntimeException beyondTheLimit) {
            throw tooLarge("the body is larger than the limit of " + config.maxBodyBytes()
                    + " bytes (turnstream.gateway.max-body-bytes)");
        }
        if (body.length > config.maxBodyBytes()) {
            throw tooLarge("the body is " + body.length + " bytes; the limit is " + config.maxBodyBytes()
                    + " (turnstream.gateway.max-body-bytes)");
        }
        if (body.length > 0) {
            JsonNode json;
            try {
                json = Json.MAPPER.readTree(body);
            } catch (IOException notJson) {
                return; // the route says what is wrong with it
            }
            String tooLong = fieldOverLimit(json, "");
            if (tooLong != null) {
                throw tooLarge(tooLong);
            }
        }
    }

    /** The first string longer than the limit, described by its path; null when there is none. */
    private String fieldOverLimit(JsonNode node, String path) {
        if (node == null) {
            return null;
        }
        if (node.isTextual() && node.asText().length() > config.maxFieldChars()) {
            return "'" + (path.isEmpty() ? "the body" : path) + "' is " + node.asText().length()
                    + " characters; the limit is " + config.maxFieldChars() + " (turnstream.gateway.max-field-chars)";
        }
        if (node.isArray()) {
            for (int i = 0; i < node.size(); i++) {
                String found = fieldOverLimit(node.get(i), path + "[" + i + "]");
                if (found != null) {
                    return found;
                }
            }
        }
        for (Iterator<Map.Entry<String, JsonNode>> fields = node.fields(); fields.hasNext(); ) {
            Map.Entry<String, JsonNode> field = fields.next();
            String found = fieldOverLimit(field.getValue(), path.isEmpty() ? field.getKey() : path + "." + field.getKey());
            if (found != null) {
                return found;
            }
        }
        return null;
    }

    private static ApiError tooLarge(String message) {
        return new ApiError(413, message);
    }

    /** The turn id of {@code /v1/turns/{turnId}} and everything below it; null for other paths. */
    static String turnIdOf(String path) {
        if (!path.startsWith(TURN_PATH)) {
            return null;
        }
        String rest = path.substring(TURN_PATH.length());
        int slash = rest.indexOf('/');
        String turnId = slash < 0 ? rest : rest.substring(0, slash);
        return turnId.isEmpty() ? null : turnId;
    }
}
