package io.turnstream.tools.builtin;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.model.Json;
import io.turnstream.tools.Tool;

/** What the built-in tools share: fixed name, description, schema and safety, and typed access to validated arguments. */
abstract class BuiltinTool implements Tool {

    private final String name;
    private final String description;
    private final JsonNode schema;
    private final boolean concurrencySafe;

    BuiltinTool(String name, String description, String schemaJson, boolean concurrencySafe) {
        this.name = name;
        this.description = description;
        this.concurrencySafe = concurrencySafe;
        try {
            this.schema = Json.MAPPER.readTree(schemaJson);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("the schema of built-in tool " + name + " is not JSON", e);
        }
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final String description() {
        return description;
    }

    @Override
    public final JsonNode inputSchema() {
        return schema.deepCopy();
    }

    @Override
    public final boolean concurrencySafe() {
        return concurrencySafe;
    }

    static String text(JsonNode args, String field, String fallback) {
        JsonNode value = args.get(field);
        return value == null || value.isNull() ? fallback : value.asText();
    }

    static int number(JsonNode args, String field, int fallback) {
        JsonNode value = args.get(field);
        return value == null || value.isNull() ? fallback : value.asInt();
    }

    static boolean flag(JsonNode args, String field) {
        JsonNode value = args.get(field);
        return value != null && value.asBoolean();
    }
}
