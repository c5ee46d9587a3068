package io.turnstream.gateway.provider;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.turnstream.model.Json;
import java.net.http.HttpRequest;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * OpenAI's Responses API ({@code POST {base}/responses}, {@code stream: true}). The previous steps'
 * output items go back in {@code input} exactly as they were received.
 */
public final class OpenAiResponsesAdapter implements ProviderAdapter {

    public static final String ID = "openai";

    @Override
    public HttpRequest.Builder request(ModelRequest request, ProviderEndpoint endpoint) {
        ObjectNode body = ProviderAdapter.streamingBody(request.model());
        if (request.system() != null) {
            body.put("instructions", request.system());
        }
        Conversation.render(request.conversation(), new InputRenderer(body.putArray("input")));
        if (!request.tools().isEmpty()) {
            ArrayNode tools = body.putArray("tools");
            ProviderAdapter.renderTools(request.tools(), () -> tools.addObject().put("type", "function"), "parameters");
        }
        return OpenAiAuth.authorize(ProviderAdapter.jsonPost(endpoint.resolve("/responses"), body), endpoint);
    }

    /** The conversation as Responses {@code input} items. */
    private static final class InputRenderer extends Conversation.RoleMessages {
        private final Set<String> customCalls = new HashSet<>();

        InputRenderer(ArrayNode input) {
            super(input);
        }

        /** An {@code input_image} part, or an {@code input_file} part with the file's data URL for a PDF. */
        @Override
        protected ObjectNode filePart(Conversation.FilePart file) {
            ObjectNode part = Json.MAPPER.createObjectNode();
            if (file.image()) {
                part.put("type", "input_image").put("image_url", file.url());
            } else {
                part.put("type", "input_file").put("filename", file.nameOrDefault()).put("file_data", file.url());
            }
            return part;
        }

        @Override
        protected String textPartType() {
            return "input_text";
        }

        @Override
        public void assistantNative(JsonNode content) {
            for (JsonNode item : content) {
                if ("custom_tool_call".equals(item.path("type").asText())) {
                    customCalls.add(item.path("call_id").asText());
                }
                out.add(item);
            }
        }

        @Override
        public void assistantToolCalls(String text, List<Conversation.ToolCall> calls) {
            if (text != null && !text.isEmpty()) {
                assistant(text);
            }
            for (Conversation.ToolCall call : calls) {
                out.addObject().put("type", "function_call").put("call_id", call.callId()).put("name", call.name())
                        .put("arguments", call.arguments().toString());
            }
        }

        @Override
        public void toolOutputs(List<Conversation.ToolOutput> outputs) {
            for (Conversation.ToolOutput output : outputs) {
                String type = customCalls.contains(output.callId()) ? "custom_tool_call_output" : "function_call_output";
                out.addObject().put("type", type).put("call_id", output.callId()).put("output", output.text());
            }
        }
    }

    @Override
    public StreamNormalizer normalizer(StepItems items) {
        return new ResponsesStreamNormalizer(items);
    }
}
