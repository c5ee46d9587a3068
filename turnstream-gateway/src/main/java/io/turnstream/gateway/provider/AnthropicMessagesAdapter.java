package io.turnstream.gateway.provider;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.turnstream.model.Json;
import java.net.http.HttpRequest;
import java.util.List;

/** Anthropic's Messages API ({@code POST /v1/messages}, {@code stream: true}); also what the simulated provider speaks. */
public final class AnthropicMessagesAdapter implements ProviderAdapter {

    public static final String ID = "anthropic";
    static final String API_VERSION = "2023-06-01";

    @Override
    public HttpRequest.Builder request(ModelRequest request, ProviderEndpoint endpoint) {
        ObjectNode body = ProviderAdapter.streamingBody(request.model());
        body.put("max_tokens", request.maxTokens());
        if (request.system() != null) {
            cacheBreakpoint(body.putArray("system").addObject().put("type", "text").put("text", request.system()));
        }
        ArrayNode messages = body.putArray("messages");
        Conversation.render(request.conversation(), new MessagesRenderer(messages));
        cacheConversationPrefix(messages);
        if (!request.tools().isEmpty()) {
            ArrayNode tools = body.putArray("tools");
            ProviderAdapter.renderTools(request.tools(), tools::addObject, "input_schema");
            cacheBreakpoint((ObjectNode) tools.get(tools.size() - 1));
        }
        if (request.thinkingBudget() != null) {
            body.putObject("thinking").put("type", "enabled").put("budget_tokens", request.thinkingBudget());
        }
        HttpRequest.Builder http = ProviderAdapter.jsonPost(endpoint.resolve("/v1/messages"), body)
                .header("anthropic-version", API_VERSION);
        if (endpoint.hasKey()) {
            http.header("x-api-key", endpoint.apiKey());
        }
        return http;
    }

    /**
     * Prompt caching: the API caches the prompt up to each block marked with {@code cache_control}, so
     * a breakpoint on the system prompt, the last tool and the end of the conversation lets the next
     * step read all of it from the cache ({@code cache_read_input_tokens}) instead of paying for it again.
     */
    private static void cacheBreakpoint(ObjectNode block) {
        block.putObject("cache_control").put("type", "ephemeral");
    }

    /** A breakpoint on the last block of the last message, unless it is one that cannot carry one (thinking). */
    private static void cacheConversationPrefix(ArrayNode messages) {
        if (messages.isEmpty()) {
            return;
        }
        ObjectNode last = (ObjectNode) messages.get(messages.size() - 1);
        JsonNode content = last.get("content");
        if (content != null && content.isTextual()) {
            ArrayNode blocks = Json.MAPPER.createArrayNode();
            blocks.addObject().put("type", "text").put("text", content.asText());
            last.set("content", blocks);
            content = blocks;
        }
        if (content instanceof ArrayNode blocks && !blocks.isEmpty()
                && blocks.get(blocks.size() - 1) instanceof ObjectNode block
                && !block.path("type").asText().contains("thinking")) {
            cacheBreakpoint(block);
        }
    }

    /** The conversation as Messages API {@code messages}. */
    private static final class MessagesRenderer extends Conversation.RoleMessages {

        MessagesRenderer(ArrayNode messages) {
            super(messages);
        }

        /** An {@code image} block, or a {@code document} block for a PDF; the file inline (base64) or by URL. */
        @Override
        protected ObjectNode filePart(Conversation.FilePart file) {
            ObjectNode block = Json.MAPPER.createObjectNode().put("type", file.image() ? "image" : "document");
            ObjectNode source = block.putObject("source");
            if (file.inline()) {
                source.put("type", "base64").put("media_type", file.mediaType()).put("data", file.base64());
            } else {
                source.put("type", "url").put("url", file.url());
            }
            if (!file.image() && file.filename() != null) {
                block.put("title", file.filename());
            }
            return block;
        }

        @Override
        public void assistantNative(JsonNode content) {
            ArrayNode blocks = Json.MAPPER.createArrayNode();
            for (JsonNode block : content) {
                // the API rejects empty text blocks, which a refusal or an early stop can leave
                if (!("text".equals(block.path("type").asText()) && block.path("text").asText().isEmpty())) {
                    // a copy: the cache breakpoint may be set on it, and the step's content must stay as received
                    blocks.add(block.deepCopy());
                }
            }
            if (!blocks.isEmpty()) {
                out.addObject().put("role", "assistant").set("content", blocks);
            }
        }

        @Override
        public void assistantToolCalls(String text, List<Conversation.ToolCall> calls) {
            ArrayNode blocks = out.addObject().put("role", "assistant").putArray("content");
            if (text != null && !text.isEmpty()) {
                blocks.addObject().put("type", "text").put("text", text);
            }
            for (Conversation.ToolCall call : calls) {
                blocks.addObject().put("type", "tool_use").put("id", call.callId()).put("name", call.name())
                        .set("input", call.arguments());
            }
        }

        @Override
        public void toolOutputs(List<Conversation.ToolOutput> outputs) {
            ArrayNode content = out.addObject().put("role", "user").putArray("content");
            for (Conversation.ToolOutput output : outputs) {
                content.addObject()
                        .put("type", "tool_result")
                        .put("tool_use_id", output.callId())
                        .put("content", output.text())
                        .put("is_error", !output.success());
            }
        }
    }

    @Override
    public StreamNormalizer normalizer(StepItems items) {
        return new AnthropicStreamNormalizer(items);
    }
}
