package io.turnstream.gateway.provider;

import java.net.http.HttpRequest;

/** Bearer authentication, shared by both OpenAI protocols; servers without a key get no header. */
final class OpenAiAuth {

    private OpenAiAuth() {
    }

    static HttpRequest.Builder authorize(HttpRequest.Builder request, ProviderEndpoint endpoint) {
        return endpoint.hasKey() ? request.header("authorization", "Bearer " + endpoint.apiKey()) : request;
    }
}
