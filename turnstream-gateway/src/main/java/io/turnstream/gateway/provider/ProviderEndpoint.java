package io.turnstream.gateway.provider;

import java.net.URI;

/**
 * Where a provider is reached and with which key. The key never leaves this record except into the
 * request header; {@link #toString()} does not show it.
 *
 * @param apiKey null for servers that need none (a local vLLM or Ollama, the simulated provider)
 */
public record ProviderEndpoint(String baseUrl, String apiKey) {

    public ProviderEndpoint {
        if (baseUrl == null || baseUrl.isBlank()) {
            throw new IllegalArgumentException("a provider base URL is required");
        }
        baseUrl = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
        URI uri;
        try {
            uri = URI.create(baseUrl);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("provider base URL '" + baseUrl + "' is not a URL: " + e.getMessage());
        }
        if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme()) || uri.getHost() == null) {
            throw new IllegalArgumentException("provider base URL '" + baseUrl + "' must be an http or https URL");
        }
    }

    public URI resolve(String path) {
        return URI.create(baseUrl + path);
    }

    public boolean hasKey() {
        return apiKey != null && !apiKey.isBlank();
    }

    @Override
    public String toString() {
        return "ProviderEndpoint[" + baseUrl + (hasKey() ? ", key set" : ", no key") + "]";
    }
}
