package io.turnstream.gateway.provider;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.ItemType;
import io.turnstream.model.Json;
import io.turnstream.model.StreamPayload.Usage;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * Reads an Anthropic Messages stream. Blocks are correlated by their {@code index}: text becomes a
 * message item, thinking a reasoning item, tool_use a function_call item. Every block, including
 * server tool blocks, redacted thinking and block types this code does not know, is kept in its
 * native shape with signatures and encrypted content untouched, so the step can be sent back.
 */
final class AnthropicStreamNormalizer extends StreamNormalizer {

    /** Anthropic counts cached input apart from {@code input_tokens}: the prompt is their sum. */
    private static final UsageTracker.Fields USAGE = new UsageTracker.Fields(
            List.of("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"), "output_tokens", null,
            "cache_read_input_tokens", "cache_creation_input_tokens", null);

    /** One content block: its native form, and the item it feeds when it has one. */
    private static final class Block {
        final ObjectNode nativeBlock;
        StepItems.Item item;
        StringBuilder inputJson;

        Block(ObjectNode nativeBlock) {
            this.nativeBlock = nativeBlock;
        }
    }

    private final Map<Integer, Block> blocks = new TreeMap<>();
    private String messageId;
    private String stopReason;

    AnthropicStreamNormalizer(StepItems items) {
        super(items);
    }

    @Override
    protected void handle(String type, JsonNode json) {
        switch (type) {
            case "message_start" -> messageStart(json.path("message"));
            case "content_block_start" -> blockStart(json.path("index").asInt(-1), json.path("content_block"));
            case "content_block_delta" -> blockDelta(blocks.get(json.path("index").asInt(-1)), json.path("delta"));
            case "content_block_stop" -> blockStop(blocks.get(json.path("index").asInt(-1)));
            case "message_delta" -> {
                String reason = text(json.path("delta"), "stop_reason");
                if (reason != null) {
                    stopReason = reason;
                }
                usage.merge(json.get("usage"));
            }
            case "message_stop" -> complete(finishReason(stopReason));
            case "error" -> providerError(text(json.path("error"), "type"), text(json.path("error"), "message"));
            default -> {
                // ping, and event types newer than this code: nothing to do
            }
        }
    }

    private void messageStart(JsonNode message) {
        String id = text(message, "id");
        if (messageId == null) {
            messageId = id == null ? "" : id;
            usage.merge(message.get("usage"));
            String reason = text(message, "stop_reason");
            if (reason != null) {
                stopReason = reason;
            }
            completeBlocks(message.path("content"));
        } else if (!Objects.equals(messageId, id == null ? "" : id)) {
            // A different message spliced into an open one: its blocks would collide by index.
            fail(ErrorInfo.of(ErrorCodes.INVALID_RESPONSE, "the provider started message " + id
                    + " while message " + messageId + " was still open"), false, false);
        }
        // the same message_start again is a harmless duplicate
    }

    /**
     * Blocks that arrive whole inside {@code message_start}, as with programmatic tool calling, where
     * the code execution container has already run and no block events follow: each is started and
     * ended at once, a tool call with its complete input.
     */
    private void completeBlocks(JsonNode content) {
        int index = 0;
        for (JsonNode contentBlock : content) {
            blockStart(index, contentBlock);
            Block block = blocks.get(index++);
            if (block == null) {
                continue;
            }
            JsonNode input = contentBlock.get("input");
            if (block.item != null && block.item.type() == ItemType.FUNCTION_CALL && input != null
                    && !input.isNull()) {
                block.item.replaceArguments(input.toString());
            }
            blockStop(block);
        }
    }

    private void blockStart(int index, JsonNode contentBlock) {
        if (index < 0 || !contentBlock.isObject()) {
            return;
        }
        Block block = new Block(contentBlock.deepCopy());
        switch (contentBlock.path("type").asText()) {
            case "text" -> block.item = items.startMessage(text(contentBlock, "text"));
            case "thinking" -> block.item = items.startReasoning(text(contentBlock, "thinking"));
            case "tool_use" -> {
                block.item = items.startFunctionCall(text(contentBlock, "name"), text(contentBlock, "id"));
                block.inputJson = new StringBuilder();
            }
            // run by the provider, not by our tool executor: kept for the conversation only
            case "server_tool_use", "mcp_tool_use" -> block.inputJson = new StringBuilder();
            default -> {
                // redacted_thinking, tool results of server tools, and newer types: native only
            }
        }
        blocks.put(index, block);
    }

    private void blockDelta(Block block, JsonNode delta) {
        if (block == null) {
            return;
        }
        ObjectNode nativeBlock = block.nativeBlock;
        switch (delta.path("type").asText()) {
            case "text_delta" -> appendText(block, "text", text(delta, "text"));
            case "thinking_delta" -> appendText(block, "thinking", text(delta, "thinking"));
            case "signature_delta" -> concat(nativeBlock, "signature", text(delta, "signature"));
            case "input_json_delta" -> {
                if (block.inputJson != null) {
                    String fragment = text(delta, "partial_json");
                    block.inputJson.append(fragment == null ? "" : fragment);
                    if (block.item != null) {
                        block.item.appendArguments(fragment);
                    }
                }
            }
            case "citations_delta" -> {
                JsonNode citation = delta.get("citation");
                if (citation != null) {
                    JsonNode citations = nativeBlock.get("citations");
                    ArrayNode list = citations instanceof ArrayNode array ? array : nativeBlock.putArray("citations");
                    list.add(citation);
                }
            }
            case "compaction_delta" -> {
                concat(nativeBlock, "content", text(delta, "content"));
                String encrypted = text(delta, "encrypted_content");
                if (encrypted != null) {
                    nativeBlock.put("encrypted_content", encrypted);
                }
            }
            default -> {
                // newer delta types: nothing to do
            }
        }
    }

    private void appendText(Block block, String field, String text) {
        concat(block.nativeBlock, field, text);
        if (block.item != null) {
            block.item.append(text);
        }
    }

    private static void concat(ObjectNode node, String field, String more) {
        if (more != null && !more.isEmpty()) {
            node.put(field, Objects.requireNonNullElse(text(node, field), "") + more);
        }
    }

    private void blockStop(Block block) {
        if (block == null) {
            return;
        }
        settleInput(block);
        if (block.item != null) {
            block.item.done(null);
        }
    }

    /** Puts the streamed tool input into the native block as the object the API expects back. */
    private static void settleInput(Block block) {
        if (block.inputJson == null || block.inputJson.toString().isBlank()) {
            return;
        }
        try {
            block.nativeBlock.set("input", Json.MAPPER.readTree(block.inputJson.toString()));
        } catch (IOException truncated) {
            // keep the input from content_block_start; the item carries the raw text
        }
    }

    private static String finishReason(String stopReason) {
        if (stopReason == null) {
            return null;
        }
        return switch (stopReason) {
            case "end_turn", "stop_sequence" -> FinishReasons.STOP;
            case "tool_use" -> FinishReasons.TOOL_CALLS;
            case "max_tokens", "model_context_window_exceeded" -> FinishReasons.LENGTH;
            case "refusal" -> FinishReasons.REFUSAL;
            default -> stopReason;
        };
    }

    @Override
    protected JsonNode assistantContent() {
        ArrayNode content = Json.MAPPER.createArrayNode();
        for (Block block : blocks.values()) {
            settleInput(block);
            content.add(block.nativeBlock);
        }
        return content;
    }

    @Override
    protected Usage usage() {
        return usage.usage(USAGE);
    }

    @Override
    protected String terminalEvent() {
        return "message_stop";
    }
}
