package io.turnstream.gateway.http;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A request the HTTP API refuses, with the status and the message the caller sees as
 * {@code {"error": message}}, and any headers the answer needs (such as {@code Retry-After}). Any route
 * or filter may throw it.
 */
public final class ApiError extends RuntimeException {

    private final int status;
    private final Map<String, String> headers;

    public ApiError(int status, String message) {
        this(status, message, Map.of());
    }

    public ApiError(int status, String message, Map<String, String> headers) {
        super(message);
        this.status = status;
        this.headers = Map.copyOf(headers);
    }

    public static ApiError badRequest(String message) {
        return new ApiError(400, message);
    }

    public static ApiError notFound(String message) {
        return new ApiError(404, message);
    }

    /**
     * 429 with {@code Retry-After} in whole seconds. It also closes the connection: the refusal is written
     * before the request's body is read, and a connection with an unread body cannot carry the client's
     * next request (a client reusing it would find it closed under it).
     */
    public static ApiError tooManyRequests(String message, long retryAfterSeconds) {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Retry-After", String.valueOf(Math.max(1, retryAfterSeconds)));
        headers.put("Connection", "close");
        return new ApiError(429, message, headers);
    }

    public int status() {
        return status;
    }

    public Map<String, String> headers() {
        return headers;
    }
}
