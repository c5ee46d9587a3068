package io.turnstream.gateway.provider;

/**
 * A tool call the model made in a step, as published in its {@code function_call} item.
 *
 * @param arguments the arguments as JSON text (as the provider sent them; "{}" when empty)
 */
public record ToolCallRequest(String itemId, String callId, String name, String arguments) {
}
