package io.turnstream.gateway.provider;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.turnstream.model.Json;
import java.net.URI;
import java.net.http.HttpRequest;
import java.util.List;
import java.util.function.Supplier;

/** One provider wire protocol: how to ask for a streamed step, and how to read the answer. */
public interface ProviderAdapter {

    /** A streaming request for one step; the caller adds timeouts and sends it. */
    HttpRequest.Builder request(ModelRequest request, ProviderEndpoint endpoint);

    /** A fresh reader for one response stream, emitting into {@code items}. */
    StreamNormalizer normalizer(StepItems items);

    /** A request body asking {@code model} for a stream. */
    static ObjectNode streamingBody(String model) {
        return Json.MAPPER.createObjectNode().put("model", model).put("stream", true);
    }

    /**
     * Renders each tool as {@code {name, description?, <schemaField>: schema}} into the object that
     * {@code slot} adds for it (each protocol nests tools its own way).
     */
    static void renderTools(List<ToolDefinition> tools, Supplier<ObjectNode> slot, String schemaField) {
        for (ToolDefinition tool : tools) {
            ObjectNode rendered = slot.get().put("name", tool.name());
            if (tool.description() != null) {
                rendered.put("description", tool.description());
            }
            rendered.set(schemaField, tool.parameters());
        }
    }

    /** A JSON POST that asks for an event stream. */
    static HttpRequest.Builder jsonPost(URI uri, ObjectNode body) {
        return HttpRequest.newBuilder(uri)
                .header("content-type", "application/json")
                .header("accept", "text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofByteArray(Json.toBytes(body)));
    }
}
