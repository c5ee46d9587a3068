package io.turnstream.tools;

import com.fasterxml.jackson.databind.JsonNode;

/** What a model is told about a tool: the gateway offers these (as Anthropic {@code tools} or OpenAI {@code functions}). */
public record ToolDefinition(String name, String description, JsonNode inputSchema, boolean concurrencySafe) {

    static ToolDefinition of(Tool tool) {
        return new ToolDefinition(tool.name(), tool.description(), tool.inputSchema(), tool.concurrencySafe());
    }
}
