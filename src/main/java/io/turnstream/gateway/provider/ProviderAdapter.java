package io.turnstream.gateway.provider;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.turnstream.model.Json;
import java.net.URI;
import java.net.http.HttpRequest;

/** One provider wire protocol: how to ask for a streamed step, and how to read the answer. */
public interface ProviderAdapter {

    /** The protocol's name, recorded with the native assistant content it produces. */
    String id();

    /** A streaming request for one step; the caller adds timeouts and sends it. */
    HttpRequest.Builder request(ModelRequest request, ProviderEndpoint endpoint);

    /** A fresh reader for one response stream, emitting into {@code items}. */
    StreamNormalizer normalizer(StepItems items);

    /** A JSON POST that asks for an event stream. */
    static HttpRequest.Builder jsonPost(URI uri, ObjectNode body) {
        return HttpRequest.newBuilder(uri)
                .header("content-type", "application/json")
                .header("accept", "text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofByteArray(Json.toBytes(body)));
    }
}
