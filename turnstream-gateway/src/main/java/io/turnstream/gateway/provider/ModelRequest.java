package io.turnstream.gateway.provider;

import java.util.List;

/**
 * One call to a model: a step of a turn.
 *
 * @param system the system prompt, or null
 * @param maxTokens the output token limit (Anthropic requires one)
 * @param thinkingBudget Anthropic extended thinking budget in tokens, or null for no thinking
 */
public record ModelRequest(String model, String system, List<Conversation.Entry> conversation,
                           List<ToolDefinition> tools, int maxTokens, Integer thinkingBudget) {
}
