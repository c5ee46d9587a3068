package io.turnstream.gateway;

/**
 * A request the HTTP API refuses, with the status and the message the caller sees as
 * {@code {"error": message}}. Any route may throw it.
 */
public final class ApiError extends RuntimeException {

    private final int status;

    public ApiError(int status, String message) {
        super(message);
        this.status = status;
    }

    public static ApiError badRequest(String message) {
        return new ApiError(400, message);
    }

    public static ApiError notFound(String message) {
        return new ApiError(404, message);
    }

    public int status() {
        return status;
    }
}
