package io.turnstream.gateway.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.model.Json;
import io.turnstream.model.ScopedIds;
import java.util.Iterator;
import java.util.List;

/** Reading a request's JSON body; every problem is a 400 that says what to fix. */
public final class JsonBody {

    private JsonBody() {
    }

    /**
     * The body as a JSON object with only the given fields.
     *
     * @param shape how the object looks, for the message when the body is not one
     */
    public static JsonNode object(String body, List<String> fields, String shape) {
        JsonNode json;
        try {
            json = Json.MAPPER.readTree(body == null ? "" : body);
        } catch (JsonProcessingException e) {
            throw ApiError.badRequest("the body is not valid JSON: " + e.getOriginalMessage());
        }
        if (json == null || !json.isObject()) {
            throw ApiError.badRequest("the body must be a JSON object such as " + shape);
        }
        for (Iterator<String> names = json.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!fields.contains(name)) {
                throw ApiError.badRequest("unknown field '" + name + "'; the fields are " + String.join(", ", fields));
            }
        }
        return json;
    }

    /** A field that, when present, is a non-empty string; null when absent. */
    public static String optionalText(JsonNode json, String field) {
        JsonNode value = json.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isTextual() || value.asText().isBlank()) {
            throw ApiError.badRequest("'" + field + "' must be a non-empty string");
        }
        return value.asText();
    }

    /** A field that, when present, is a client-chosen id ({@link ScopedIds}); null when absent. */
    public static String optionalId(JsonNode json, String field) {
        String value = optionalText(json, field);
        return value == null ? null : requireId("'" + field + "'", value);
    }

    /** An id a client chose (in a body or a path): a 400 saying what an id may be when it is not one. */
    public static String requireId(String what, String value) {
        if (!ScopedIds.isValid(value)) {
            String shown = value == null ? "absent" : value.length() > 40 ? value.length() + " characters long" : "'" + value + "'";
            throw ApiError.badRequest(what + " must be " + ScopedIds.DESCRIPTION + "; it is " + shown);
        }
        return value;
    }
}
