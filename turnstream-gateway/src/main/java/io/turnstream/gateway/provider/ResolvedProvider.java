package io.turnstream.gateway.provider;

/**
 * A turn's provider, resolved: how to talk to it ({@code adapter}), where ({@code endpoint}), and
 * which model to ask for.
 *
 * @param name the provider's name, as a request gives it
 */
public record ResolvedProvider(String name, ProviderAdapter adapter, ProviderEndpoint endpoint, String model) {
}
