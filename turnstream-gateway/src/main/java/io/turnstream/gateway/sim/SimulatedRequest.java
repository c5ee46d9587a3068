package io.turnstream.gateway.sim;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.gateway.loop.CompactionPrompts;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A Messages API request as the simulated provider received it, with the views a script needs to
 * decide what to answer: the last user text, the tool results just returned, the tools offered.
 *
 * @param number 1 for the server's first request, counting every request it received
 */
public record SimulatedRequest(int number, JsonNode body) {

    /** One tool result of the last user message, with the call it answers. */
    public record ToolResultView(String toolUseId, String toolName, JsonNode input, String content, boolean error) {
    }

    public String model() {
        return body.path("model").asText();
    }

    public boolean offers(String toolName) {
        for (JsonNode tool : body.path("tools")) {
            if (toolName.equals(tool.path("name").asText())) {
                return true;
            }
        }
        return false;
    }

    /** Whether the gateway asks for a summary of the conversation, to compact it. */
    public boolean asksForSummary() {
        return CompactionPrompts.SUMMARISE.equals(lastUserText());
    }

    /** How many messages the request carries. */
    public int messageCount() {
        return body.path("messages").size();
    }

    /** The text of the first message (the conversation's opening prompt), or null. */
    public String firstUserText() {
        JsonNode first = body.path("messages").path(0);
        return "user".equals(first.path("role").asText()) ? text(first) : null;
    }

    /** The text of the last message when it is a user message with text; null otherwise. */
    public String lastUserText() {
        JsonNode last = lastMessage();
        if (last == null || !"user".equals(last.path("role").asText())) {
            return null;
        }
        return text(last);
    }

    /** A message's text: its string content, or its text blocks joined; null when it has none. */
    private static String text(JsonNode message) {
        JsonNode content = message.path("content");
        if (content.isTextual()) {
            return content.asText();
        }
        StringBuilder text = new StringBuilder();
        for (JsonNode block : content) {
            if ("text".equals(block.path("type").asText())) {
                text.append(block.path("text").asText());
            }
        }
        return text.length() == 0 ? null : text.toString();
    }

    /** The tool results in the last message, each with the name and input of the call it answers. */
    public List<ToolResultView> lastToolResults() {
        Map<String, JsonNode> calls = new HashMap<>();
        for (JsonNode message : body.path("messages")) {
            for (JsonNode block : message.path("content")) {
                if ("tool_use".equals(block.path("type").asText())) {
                    calls.put(block.path("id").asText(), block);
                }
            }
        }
        List<ToolResultView> results = new ArrayList<>();
        JsonNode last = lastMessage();
        if (last == null) {
            return results;
        }
        for (JsonNode block : last.path("content")) {
            if ("tool_result".equals(block.path("type").asText())) {
                String id = block.path("tool_use_id").asText();
                JsonNode call = calls.get(id);
                JsonNode content = block.path("content");
                results.add(new ToolResultView(id, call == null ? null : call.path("name").asText(),
                        call == null ? null : call.path("input"), content.isTextual() ? content.asText() : content.toString(),
                        block.path("is_error").asBoolean(false)));
            }
        }
        return results;
    }

    private JsonNode lastMessage() {
        JsonNode messages = body.path("messages");
        return messages.isArray() && !messages.isEmpty() ? messages.get(messages.size() - 1) : null;
    }
}
