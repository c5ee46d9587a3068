package io.turnstream.model;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A completed {@code function_call} on {@code llm.tool-calls}, keyed by turn id. {@code arguments}
 * is the parsed JSON object, or the raw string when it does not parse.
 */
public record ToolCall(String callId, String turnId, String threadId, String runId, String itemId,
                       String toolName, JsonNode arguments, long requestedAt) {
}
