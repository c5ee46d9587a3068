package io.turnstream.gateway;

import io.turnstream.gateway.http.ApiError;
import io.turnstream.gateway.provider.AnthropicMessagesAdapter;
import io.turnstream.gateway.provider.OpenAiChatAdapter;
import io.turnstream.gateway.provider.OpenAiResponsesAdapter;
import io.turnstream.gateway.provider.ProviderEndpoint;
import io.turnstream.gateway.provider.ResolvedProvider;
import io.turnstream.gateway.sim.SimulatedAnthropicServer;
import io.turnstream.gateway.sim.SimulationScript;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Resolves a turn's {@code provider} and {@code model} to a protocol adapter and an endpoint. The
 * default provider is the first one with an API key (Anthropic, then OpenAI), else the simulated
 * one, which is started in-process on first use when no simulated base URL is given.
 */
final class Providers implements AutoCloseable {

    static final String ANTHROPIC = AnthropicMessagesAdapter.ID;
    static final String OPENAI = OpenAiResponsesAdapter.ID;
    static final String OPENAI_CHAT = OpenAiChatAdapter.ID;
    static final String SIMULATED = ProviderEndpoints.SIMULATED;
    static final String SIMULATED_MODEL = "turnstream-simulated";
    private static final List<String> NAMES = List.of(ANTHROPIC, OPENAI, OPENAI_CHAT, SIMULATED);

    private static final Logger LOG = LoggerFactory.getLogger(Providers.class);

    private final ProviderEndpoints endpoints;
    private final GatewayConfig config;
    private SimulatedAnthropicServer simulated;

    Providers(ProviderEndpoints endpoints, GatewayConfig config) {
        this.endpoints = endpoints;
        this.config = config;
    }

    String defaultProvider() {
        return endpoints.defaultProvider();
    }

    ResolvedProvider resolve(String provider, String model) {
        String name = provider != null ? provider : defaultProvider();
        return switch (name) {
            case ANTHROPIC -> new ResolvedProvider(name, new AnthropicMessagesAdapter(),
                    configured(endpoints.anthropic(), name, "ANTHROPIC"), required(model, name));
            case OPENAI -> new ResolvedProvider(name, new OpenAiResponsesAdapter(),
                    configured(endpoints.openai(), name, "OPENAI"), required(model, name));
            case OPENAI_CHAT -> new ResolvedProvider(name, new OpenAiChatAdapter(),
                    configured(endpoints.openai(), name, "OPENAI"), required(model, name));
            case SIMULATED -> new ResolvedProvider(name, new AnthropicMessagesAdapter(), simulatedEndpoint(),
                    model != null ? model : SIMULATED_MODEL);
            default -> throw ApiError.badRequest("unknown provider '" + name + "'; the providers are "
                    + String.join(", ", NAMES));
        };
    }

    private static ProviderEndpoint configured(ProviderEndpoint endpoint, String name, String envPrefix) {
        if (endpoint == null) {
            throw ApiError.badRequest("provider '" + name + "' is not configured: set " + envPrefix + "_API_KEY (or "
                    + envPrefix + "_BASE_URL for a compatible server that needs no key) where the gateway runs, or use "
                    + "provider '" + SIMULATED + "'");
        }
        return endpoint;
    }

    private static String required(String model, String provider) {
        if (model == null) {
            throw ApiError.badRequest("'model' is required for provider '" + provider + "'");
        }
        return model;
    }

    private synchronized ProviderEndpoint simulatedEndpoint() {
        if (endpoints.simulatedBaseUrl() != null) {
            return new ProviderEndpoint(endpoints.simulatedBaseUrl(), null);
        }
        if (simulated == null) {
            simulated = SimulatedAnthropicServer.start(0,
                    SimulationScript.workspaceTour(config.simulatedAnswerTokens()), config.simulatedTokensPerSecond());
            LOG.info("simulated provider started at {} ({} tokens/s)", simulated.baseUrl(),
                    config.simulatedTokensPerSecond());
        }
        return new ProviderEndpoint(simulated.baseUrl(), null);
    }

    @Override
    public synchronized void close() {
        if (simulated != null) {
            simulated.close();
        }
    }
}
