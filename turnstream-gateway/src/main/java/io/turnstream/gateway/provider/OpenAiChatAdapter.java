package io.turnstream.gateway.provider;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.turnstream.model.Json;
import java.net.http.HttpRequest;
import java.util.List;

/**
 * OpenAI Chat Completions ({@code POST {base}/chat/completions}, {@code stream: true}), the protocol of
 * most OpenAI-compatible servers. Usage is requested with {@code stream_options.include_usage}.
 */
public final class OpenAiChatAdapter implements ProviderAdapter {

    public static final String ID = "openai-chat";

    @Override
    public HttpRequest.Builder request(ModelRequest request, ProviderEndpoint endpoint) {
        ObjectNode body = ProviderAdapter.streamingBody(request.model());
        body.putObject("stream_options").put("include_usage", true);
        ArrayNode messages = body.putArray("messages");
        if (request.system() != null) {
            messages.addObject().put("role", "system").put("content", request.system());
        }
        Conversation.render(request.conversation(), new MessagesRenderer(messages));
        if (!request.tools().isEmpty()) {
            ArrayNode tools = body.putArray("tools");
            ProviderAdapter.renderTools(request.tools(),
                    () -> tools.addObject().put("type", "function").putObject("function"), "parameters");
        }
        return OpenAiAuth.authorize(ProviderAdapter.jsonPost(endpoint.resolve("/chat/completions"), body), endpoint);
    }

    /** The conversation as Chat {@code messages}. */
    private static final class MessagesRenderer extends Conversation.RoleMessages {

        MessagesRenderer(ArrayNode messages) {
            super(messages);
        }

        /** An {@code image_url} part, or a {@code file} part with the file's data URL for a PDF. */
        @Override
        protected ObjectNode filePart(Conversation.FilePart file) {
            ObjectNode part = Json.MAPPER.createObjectNode();
            if (file.image()) {
                part.put("type", "image_url").putObject("image_url").put("url", file.url());
            } else {
                part.put("type", "file").putObject("file").put("filename", file.nameOrDefault())
                        .put("file_data", file.url());
            }
            return part;
        }

        @Override
        public void assistantNative(JsonNode content) {
            out.add(content);
        }

        @Override
        public void assistantToolCalls(String text, List<Conversation.ToolCall> calls) {
            ObjectNode message = out.addObject().put("role", "assistant");
            if (text != null && !text.isEmpty()) {
                message.put("content", text);
            } else {
                message.putNull("content");
            }
            ArrayNode toolCalls = message.putArray("tool_calls");
            for (Conversation.ToolCall call : calls) {
                toolCalls.addObject().put("id", call.callId()).put("type", "function").putObject("function")
                        .put("name", call.name()).put("arguments", call.arguments().toString());
            }
        }

        @Override
        public void toolOutputs(List<Conversation.ToolOutput> outputs) {
            for (Conversation.ToolOutput output : outputs) {
                out.addObject().put("role", "tool").put("tool_call_id", output.callId())
                        .put("content", output.text());
            }
        }
    }

    @Override
    public StreamNormalizer normalizer(StepItems items) {
        return new ChatStreamNormalizer(items);
    }
}
