package io.turnstream.gateway.provider;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A tool the model is offered, provider-neutral; each adapter renders it in its own wire shape.
 *
 * @param parameters the JSON schema of the tool's arguments (an object schema)
 */
public record ToolDefinition(String name, String description, JsonNode parameters) {
}
