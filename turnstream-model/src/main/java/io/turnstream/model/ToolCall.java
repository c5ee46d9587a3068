package io.turnstream.model;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A completed {@code function_call} on {@code llm.tool-calls}, keyed by turn id. {@code arguments}
 * is the parsed JSON object, or the raw string when it does not parse. {@code tenantId} is the turn's
 * tenant (null for none): the tool executor runs the call in that tenant's workspace.
 */
public record ToolCall(String callId, String turnId, String threadId, String runId, String itemId,
                       String toolName, JsonNode arguments, long requestedAt, String tenantId) {

    /** A call of a turn of no tenant. */
    public ToolCall(String callId, String turnId, String threadId, String runId, String itemId,
                    String toolName, JsonNode arguments, long requestedAt) {
        this(callId, turnId, threadId, runId, itemId, toolName, arguments, requestedAt, null);
    }
}
