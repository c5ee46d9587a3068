package io.turnstream.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.turnstream.model.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/** A test's requests to a gateway's API, as a client sends them over loopback HTTP. */
public final class GatewayHttp {

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private GatewayHttp() {
    }

    /** POSTs {@code body} as JSON to {@code path} of {@code gateway}. */
    public static HttpResponse<String> post(Gateway gateway, String path, String body) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(gateway.baseUrl() + path))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Starts a turn of {@code request} ({@code POST /v1/turns}), which the gateway must accept; its turn id. */
    public static String startTurn(Gateway gateway, ObjectNode request) throws Exception {
        HttpResponse<String> response = post(gateway, "/v1/turns", Json.toString(request));
        assertThat(response.statusCode()).as(response.body()).isEqualTo(202);
        return Json.fromString(response.body(), JsonNode.class).get("turnId").asText();
    }
}
