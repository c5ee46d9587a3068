package io.turnstream.model;

import com.fasterxml.jackson.databind.JsonNode;

/** Exactly one per call id on {@code llm.tool-results}, keyed by turn id. */
public record ToolResult(String callId, String turnId, String toolName, boolean success, JsonNode output,
                         ErrorInfo error, long startedAt, long completedAt) {
}
