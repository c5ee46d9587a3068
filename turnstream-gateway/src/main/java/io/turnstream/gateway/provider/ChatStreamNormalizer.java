package io.turnstream.gateway.provider;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.turnstream.model.Json;
import io.turnstream.model.StreamPayload.Usage;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reads an OpenAI Chat Completions stream, as OpenAI and compatible servers (vLLM, Ollama, LiteLLM,
 * Groq, Azure) send it. Tool calls are correlated by their {@code index} in {@code delta.tool_calls};
 * ids and names may arrive late or only once. Reasoning text ({@code reasoning_content} or
 * {@code reasoning}, or Mistral's {@code thinking} content parts) becomes a reasoning item, content
 * (a string or a list of typed parts) and refusal text one message item. Only
 * choice 0 is followed: the gateway never asks for more than one choice. Items end at
 * {@code finish_reason}; the stream ends at {@code [DONE]}, or at the end of the body once a finish
 * reason arrived (some compatible servers omit {@code [DONE]}).
 */
final class ChatStreamNormalizer extends StreamNormalizer {

    private static final String DONE = "[DONE]";

    private StepItems.Item message;
    private StepItems.Item reasoning;
    private final Map<Integer, StepItems.Item> toolCalls = new TreeMap<>();
    private final StringBuilder content = new StringBuilder();
    private final StringBuilder refusal = new StringBuilder();

    ChatStreamNormalizer(StepItems items) {
        super(items);
    }

    @Override
    protected boolean acceptSentinel(String data) {
        if (!DONE.equals(data.strip())) {
            return false;
        }
        complete(finishReason);
        return true;
    }

    @Override
    protected void handle(String type, JsonNode chunk) {
        JsonNode error = chunk.get("error");
        if (error != null && error.isObject()) {
            String code = text(error, "code");
            providerError(code != null ? code : text(error, "type"), text(error, "message"));
            return;
        }
        usage.merge(chunk.get("usage"));
        for (JsonNode choice : chunk.path("choices")) {
            if (choice.path("index").asInt(0) == 0) {
                choice(choice);
            }
        }
    }

    private void choice(JsonNode choice) {
        JsonNode delta = choice.path("delta");
        String thought = text(delta, "reasoning_content");
        appendReasoning(thought != null ? thought : text(delta, "reasoning"));
        JsonNode parts = delta.get("content");
        if (parts != null && parts.isArray()) {
            contentParts(parts);
        } else {
            appendMessage(text(delta, "content"), content);
        }
        appendMessage(text(delta, "refusal"), refusal);
        int position = 0;
        for (JsonNode call : delta.path("tool_calls")) {
            toolCallDelta(call.path("index").asInt(position++), call);
        }
        String reason = text(choice, "finish_reason");
        if (reason != null) {
            finishReason = finishReason(reason);
            items.closeAll();
        }
    }

    /**
     * Content given as a list of typed parts, as Mistral's reasoning models send it:
     * {@code {type: text, text}} is answer text, {@code {type: thinking, thinking: [parts]}} reasoning.
     * Part types this code does not know are skipped.
     */
    private void contentParts(JsonNode parts) {
        for (JsonNode part : parts) {
            switch (part.path("type").asText()) {
                case "text" -> appendMessage(text(part, "text"), content);
                case "thinking" -> {
                    JsonNode thinking = part.path("thinking");
                    if (thinking.isTextual()) {
                        appendReasoning(thinking.asText());
                    }
                    for (JsonNode thought : thinking) {
                        appendReasoning(text(thought, "text"));
                    }
                }
                default -> {
                    // images, references and newer part types carry no text to stream
                }
            }
        }
    }

    private void appendReasoning(String text) {
        if (text == null || text.isEmpty()) {
            return;
        }
        if (reasoning == null || !reasoning.isOpen()) {
            reasoning = items.startReasoning(null);
        }
        reasoning.append(text);
    }

    private void appendMessage(String text, StringBuilder nativeField) {
        if (text == null || text.isEmpty()) {
            return;
        }
        endReasoning();
        if (message == null || !message.isOpen()) {
            message = items.startMessage(null);
        }
        message.append(text);
        nativeField.append(text);
    }

    private void toolCallDelta(int index, JsonNode call) {
        JsonNode function = call.path("function");
        StepItems.Item item = toolCalls.get(index);
        if (item == null) {
            endReasoning();
            item = items.startFunctionCall(text(function, "name"), text(call, "id"));
            toolCalls.put(index, item);
        } else {
            item.name(text(function, "name"));
            item.callId(text(call, "id"));
        }
        item.appendArguments(text(function, "arguments"));
    }

    /** Reasoning comes first; once the answer starts, the reasoning item is complete. */
    private void endReasoning() {
        if (reasoning != null) {
            reasoning.done(null);
        }
    }

    private static String finishReason(String reason) {
        return switch (reason) {
            case "stop" -> FinishReasons.STOP;
            case "tool_calls", "function_call" -> FinishReasons.TOOL_CALLS;
            case "length" -> FinishReasons.LENGTH;
            case "content_filter" -> FinishReasons.CONTENT_FILTER;
            default -> reason;
        };
    }

    @Override
    protected void endedWithoutTerminal() {
        if (finishReason != null) {
            complete(finishReason);
        } else {
            super.endedWithoutTerminal();
        }
    }

    @Override
    protected JsonNode assistantContent() {
        ObjectNode assistant = Json.MAPPER.createObjectNode().put("role", "assistant");
        if (content.length() > 0) {
            assistant.put("content", content.toString());
        } else {
            assistant.putNull("content");
        }
        if (refusal.length() > 0) {
            assistant.put("refusal", refusal.toString());
        }
        List<ToolCallRequest> calls = items.toolCalls();
        if (!calls.isEmpty()) {
            ArrayNode list = assistant.putArray("tool_calls");
            for (ToolCallRequest call : calls) {
                list.addObject().put("id", call.callId()).put("type", "function").putObject("function")
                        .put("name", call.name()).put("arguments", call.arguments());
            }
        }
        return assistant;
    }

    /** OpenAI counts cached input inside {@code prompt_tokens}. */
    private static final UsageTracker.Fields USAGE = new UsageTracker.Fields(List.of("prompt_tokens"), "completion_tokens",
            "total_tokens", "prompt_tokens_details.cached_tokens", null, "completion_tokens_details.reasoning_tokens");

    @Override
    protected Usage usage() {
        return usage.usage(USAGE);
    }

    @Override
    protected String terminalEvent() {
        return "data: [DONE]";
    }
}
