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
 * Reads an OpenAI Responses stream. Output items are correlated by {@code output_index} only: item
 * ids are ignored because some servers rotate them on every event. Messages, reasoning summaries
 * (or raw reasoning text) and function or custom tool calls become items; every output item is kept
 * in its final native form (encrypted reasoning included) for the next request.
 */
final class ResponsesStreamNormalizer extends StreamNormalizer {

    /** One output item: its native form and the item it feeds when it has one. */
    private static final class Output {
        ObjectNode nativeItem;
        StepItems.Item item;
        final String type;
        int summaryIndex = -1;

        Output(ObjectNode nativeItem) {
            this.nativeItem = nativeItem;
            this.type = nativeItem.path("type").asText();
        }
    }

    private final Map<Integer, Output> outputs = new TreeMap<>();

    ResponsesStreamNormalizer(StepItems items) {
        super(items);
    }

    @Override
    protected void handle(String type, JsonNode json) {
        int index = json.path("output_index").asInt(-1);
        switch (type) {
            case "response.output_item.added" -> added(index, json.path("item"));
            case "response.output_text.delta", "response.refusal.delta" -> appendText(outputs.get(index), json);
            case "response.reasoning_summary_text.delta" -> appendSummary(outputs.get(index), json);
            case "response.reasoning_text.delta" -> appendReasoning(outputs.get(index), text(json, "delta"));
            case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta" ->
                    appendArguments(outputs.get(index), text(json, "delta"));
            case "response.function_call_arguments.done" -> replaceArguments(outputs.get(index), text(json, "arguments"));
            case "response.custom_tool_call_input.done" -> replaceArguments(outputs.get(index), text(json, "input"));
            case "response.output_item.done" -> done(index, json.path("item"));
            case "response.completed" -> {
                usage.merge(json.path("response").get("usage"));
                complete(items.toolCalls().isEmpty() ? FinishReasons.STOP : FinishReasons.TOOL_CALLS);
            }
            case "response.incomplete" -> {
                usage.merge(json.path("response").get("usage"));
                complete(incompleteReason(text(json.path("response").path("incomplete_details"), "reason")));
            }
            case "response.failed" -> {
                JsonNode response = json.path("response");
                usage.merge(response.get("usage"));
                providerError(text(response.path("error"), "code"), text(response.path("error"), "message"));
            }
            case "error" -> {
                // fields are top-level in the documented shape, nested under "error" in what servers send
                JsonNode nested = json.path("error");
                String code = firstText(json, nested, "code");
                providerError(code != null ? code : text(nested, "type"), firstText(json, nested, "message"));
            }
            default -> {
                // lifecycle, content parts, annotations, server tool progress, and newer event types
            }
        }
    }

    private void added(int index, JsonNode item) {
        if (index < 0 || !item.isObject()) {
            return;
        }
        Output output = new Output(item.deepCopy());
        switch (output.type) {
            case "message" -> output.item = items.startMessage(null);
            case "function_call" -> {
                output.item = items.startFunctionCall(text(item, "name"), text(item, "call_id"));
                output.item.appendArguments(text(item, "arguments"));
            }
            case "custom_tool_call" -> {
                output.item = items.startFunctionCall(text(item, "name"), text(item, "call_id"));
                output.item.appendArguments(text(item, "input"));
            }
            default -> {
                // reasoning starts an item with its first text; server tool calls stay native only
            }
        }
        outputs.put(index, output);
    }

    private void appendText(Output output, JsonNode json) {
        if (output != null && output.item != null) {
            output.item.append(text(json, "delta"));
        }
    }

    /** Summary parts of one reasoning item are separated by a blank line, as the UI shows them. */
    private void appendSummary(Output output, JsonNode json) {
        if (output == null) {
            return;
        }
        int part = json.path("summary_index").asInt(0);
        String delta = text(json, "delta");
        if (output.summaryIndex >= 0 && part != output.summaryIndex && output.item != null
                && !output.item.content().isEmpty()) {
            delta = "\n\n" + delta;
        }
        output.summaryIndex = part;
        appendReasoning(output, delta);
    }

    private void appendReasoning(Output output, String delta) {
        if (output == null || delta == null || delta.isEmpty()) {
            return;
        }
        if (output.item == null) {
            output.item = items.startReasoning(null);
        }
        output.item.append(delta);
    }

    private static void appendArguments(Output output, String fragment) {
        if (output != null && output.item != null) {
            output.item.appendArguments(fragment);
        }
    }

    private static void replaceArguments(Output output, String complete) {
        if (complete != null && output != null && output.item != null) {
            output.item.replaceArguments(complete);
        }
    }

    private void done(int index, JsonNode item) {
        if (!item.isObject()) {
            return;
        }
        if (!outputs.containsKey(index)) {
            added(index, item);
        }
        Output output = outputs.get(index);
        if (output == null) {
            return;
        }
        output.nativeItem = item.deepCopy();
        switch (output.type) {
            case "message" -> output.item.done(joinedText(item.path("content"), ""));
            case "reasoning" -> {
                String summary = joinedText(item.path("summary"), "\n\n");
                if (output.item == null && summary != null && !summary.isEmpty()) {
                    output.item = items.startReasoning(null);
                    output.item.append(summary);
                }
                if (output.item != null) {
                    output.item.done(summary == null || summary.isEmpty() ? null : summary);
                }
            }
            case "function_call", "custom_tool_call" -> {
                replaceArguments(output, text(item, "function_call".equals(output.type) ? "arguments" : "input"));
                output.item.name(text(item, "name"));
                output.item.callId(text(item, "call_id"));
                output.item.done(null);
            }
            default -> {
                // native only
            }
        }
    }

    /** The text of a content or summary array's parts (text or refusal), joined; null when it has none. */
    private static String joinedText(JsonNode parts, String separator) {
        StringBuilder joined = null;
        for (JsonNode part : parts) {
            String value = text(part, part.has("refusal") ? "refusal" : "text");
            if (value != null) {
                joined = joined == null ? new StringBuilder(value) : joined.append(separator).append(value);
            }
        }
        return joined == null ? null : joined.toString();
    }

    private static String firstText(JsonNode outer, JsonNode inner, String field) {
        String value = text(outer, field);
        return value != null ? value : text(inner, field);
    }

    private static String incompleteReason(String reason) {
        if (reason == null) {
            return FinishReasons.LENGTH;
        }
        return switch (reason) {
            case "max_output_tokens" -> FinishReasons.LENGTH;
            case "content_filter" -> FinishReasons.CONTENT_FILTER;
            default -> reason;
        };
    }

    @Override
    protected JsonNode assistantContent() {
        ArrayNode content = Json.MAPPER.createArrayNode();
        outputs.values().forEach(output -> content.add(output.nativeItem));
        return content;
    }

    /** OpenAI counts cached input inside {@code input_tokens}. */
    private static final UsageTracker.Fields USAGE = new UsageTracker.Fields(List.of("input_tokens"), "output_tokens",
            "total_tokens", "input_tokens_details.cached_tokens", null, "output_tokens_details.reasoning_tokens");

    @Override
    protected Usage usage() {
        return usage.usage(USAGE);
    }

    @Override
    protected String terminalEvent() {
        return "response.completed";
    }
}
