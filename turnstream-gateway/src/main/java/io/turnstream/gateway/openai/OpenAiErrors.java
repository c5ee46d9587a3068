package io.turnstream.gateway.openai;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.turnstream.model.Json;

/**
 * Errors as the OpenAI API writes them, {@code {"error": {message, type, param, code}}}, which the
 * OpenAI SDKs turn into their typed exceptions. The gateway's other routes answer {@code {"error": "..."}}.
 */
public final class OpenAiErrors {

    /** The routes that answer errors in OpenAI's shape. */
    public static boolean applies(String path) {
        return OpenAiApi.CHAT_COMPLETIONS.equals(path) || OpenAiApi.RESPONSES.equals(path);
    }

    private OpenAiErrors() {
    }

    public static ObjectNode body(int status, String message) {
        ObjectNode body = Json.MAPPER.createObjectNode();
        ObjectNode error = body.putObject("error").put("message", message).put("type", type(status));
        error.putNull("param");
        error.putNull("code");
        return body;
    }

    private static String type(int status) {
        return switch (status) {
            case 400, 404, 409, 413, 415, 422 -> "invalid_request_error";
            case 401 -> "authentication_error";
            case 403 -> "permission_error";
            case 429 -> "rate_limit_error";
            default -> "api_error";
        };
    }
}
