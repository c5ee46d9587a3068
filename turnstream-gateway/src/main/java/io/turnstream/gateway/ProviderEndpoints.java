package io.turnstream.gateway;

import io.turnstream.gateway.provider.AnthropicMessagesAdapter;
import io.turnstream.gateway.provider.OpenAiResponsesAdapter;
import io.turnstream.gateway.provider.ProviderEndpoint;
import java.util.Map;

/**
 * Where the real providers are, from the environment: {@code ANTHROPIC_API_KEY},
 * {@code ANTHROPIC_BASE_URL}, {@code OPENAI_API_KEY}, {@code OPENAI_BASE_URL}. A provider is
 * configured when its key or its base URL is set (a local OpenAI-compatible server needs no key).
 *
 * @param anthropic null when not configured
 * @param openai null when not configured; serves both {@code openai} and {@code openai-chat}
 * @param simulatedBaseUrl a running simulated provider to use, or null to start one in-process when needed
 */
public record ProviderEndpoints(ProviderEndpoint anthropic, ProviderEndpoint openai, String simulatedBaseUrl) {

    public static final String ANTHROPIC_DEFAULT_URL = "https://api.anthropic.com";
    public static final String OPENAI_DEFAULT_URL = "https://api.openai.com/v1";
    /** The provider that needs no key: a scripted Anthropic-compatible server. */
    public static final String SIMULATED = "simulated";

    public static ProviderEndpoints fromEnvironment(Map<String, String> env) {
        return new ProviderEndpoints(
                endpoint(env, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", ANTHROPIC_DEFAULT_URL),
                endpoint(env, "OPENAI_API_KEY", "OPENAI_BASE_URL", OPENAI_DEFAULT_URL),
                null);
    }

    /** The provider of turns that name none: the first one with an API key (Anthropic, then OpenAI), else the simulated one. */
    public String defaultProvider() {
        if (anthropic != null && anthropic.hasKey()) {
            return AnthropicMessagesAdapter.ID;
        }
        if (openai != null && openai.hasKey()) {
            return OpenAiResponsesAdapter.ID;
        }
        return SIMULATED;
    }

    /** Only the simulated provider, at {@code baseUrl} (or started in-process when null). */
    public static ProviderEndpoints simulatedOnly(String baseUrl) {
        return new ProviderEndpoints(null, null, baseUrl);
    }

    private static ProviderEndpoint endpoint(Map<String, String> env, String keyVariable, String urlVariable,
                                             String defaultUrl) {
        String key = blankToNull(env.get(keyVariable));
        String url = blankToNull(env.get(urlVariable));
        if (key == null && url == null) {
            return null;
        }
        return new ProviderEndpoint(url != null ? url : defaultUrl, key);
    }

    private static String blankToNull(String value) {
        return value == null || value.isBlank() ? null : value.strip();
    }
}
