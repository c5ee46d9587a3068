package io.turnstream.model;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * One tool a tool executor runs, on the compacted {@code llm.tool-definitions} keyed by tool name:
 * what a model needs to call it. A tombstone (null value) withdraws the tool.
 *
 * @param inputSchema JSON schema of the arguments (an object schema)
 * @param concurrencySafe the tool only reads, so calls of one turn may run together
 * @param publishedBy the instance id of the executor that published it
 * @param publishedAt epoch milliseconds
 */
public record PublishedTool(String name, String description, JsonNode inputSchema, boolean concurrencySafe,
                            String publishedBy, long publishedAt) {
}
