package io.turnstream.gateway.provider;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A tool the model is offered, provider-neutral; each adapter renders it in its own wire shape.
 *
 * @param parameters the JSON schema of the tool's arguments (an object schema)
 * @param readOnly the tool only reads (its executor published it {@code concurrencySafe}): a call of it may
 *                 start while the model still streams, and run although its attempt is withdrawn
 */
public record ToolDefinition(String name, String description, JsonNode parameters, boolean readOnly) {

    /** A tool not declared read-only: its calls run only once their step is committed. */
    public ToolDefinition(String name, String description, JsonNode parameters) {
        this(name, description, parameters, false);
    }
}
