package io.turnstream.gateway.security;

import io.turnstream.gateway.ProviderEndpoints;
import io.turnstream.gateway.http.ApiError;
import io.turnstream.gateway.loop.PriceTable;
import io.turnstream.runtime.Settings;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What a tenant may spend the operator's provider keys on: which provider and model (an allow-list of
 * {@code provider:model} entries, {@code provider:*} for any model of that provider), and how many steps
 * a turn may take at most (a request's {@code maxSteps} over the operator's limit is refused, not cut).
 * Settings: {@code turnstream.gateway.allowed-models} for every tenant, {@code turnstream.gateway.tenant.<tenant>.allowed-models}
 * for one, and {@code turnstream.gateway.max-steps-limit}. Without a list, only the models the operator
 * configured are allowed: those the gateway has a price for (built in or {@code turnstream.gateway.price.*}, so
 * every turn's cost counts against the cost budget), the configured fallback model, and any simulated model.
 */
public final class SpendPolicy {

    private static final String PREFIX = SecurityConfig.PREFIX;
    public static final String ALLOWED_MODELS = PREFIX + "allowed-models";

    private final int maxStepsLimit;
    private final List<String> allowedForAll;
    private final Map<String, List<String>> allowedPerTenant;
    private final PriceTable prices;
    private final String fallbackModel;

    SpendPolicy(int maxStepsLimit, List<String> allowedForAll, Map<String, List<String>> allowedPerTenant,
                PriceTable prices, String fallbackModel) {
        this.maxStepsLimit = maxStepsLimit;
        this.allowedForAll = List.copyOf(allowedForAll);
        this.allowedPerTenant = Map.copyOf(allowedPerTenant);
        this.prices = prices;
        this.fallbackModel = fallbackModel;
    }

    /**
     * @param defaultMaxSteps the steps of a turn that names none: at least 1, and within the limit
     * @param prices the gateway's price table: without an allow-list, the models it prices are the allowed ones
     * @param fallbackModel the operator's fallback model (allowed without a list), or null
     */
    public static SpendPolicy from(Settings settings, int defaultMaxSteps, PriceTable prices, String fallbackModel) {
        if (defaultMaxSteps < 1) {
            // a turn of no step would end at once, as if it had reached its limit, without calling the model
            throw new IllegalArgumentException(PREFIX + "max-steps (" + defaultMaxSteps + ") must be at least 1");
        }
        long limit = settings.getLong(PREFIX + "max-steps-limit", Math.max(25, defaultMaxSteps));
        if (limit < defaultMaxSteps) {
            throw new IllegalArgumentException(PREFIX + "max-steps (" + defaultMaxSteps + ") is over "
                    + PREFIX + "max-steps-limit (" + limit + ")");
        }
        Map<String, List<String>> perTenant = new HashMap<>();
        for (String key : settings.all().stringPropertyNames()) {
            if (key.startsWith(PREFIX + "tenant.") && key.endsWith(".allowed-models")) {
                String tenant = key.substring((PREFIX + "tenant.").length(), key.length() - ".allowed-models".length());
                perTenant.put(tenant, entries(settings.get(key, ""), key));
            }
        }
        return new SpendPolicy((int) limit, entries(settings.get(ALLOWED_MODELS, ""), ALLOWED_MODELS),
                perTenant, prices, fallbackModel);
    }

    private static List<String> entries(String value, String key) {
        List<String> entries = Arrays.stream(value.split(",")).map(String::strip).filter(e -> !e.isEmpty()).toList();
        for (String entry : entries) {
            int colon = entry.indexOf(':');
            if (colon < 1 || colon == entry.length() - 1) {
                throw new IllegalArgumentException(key + ": '" + entry + "' is not provider:model (or provider:*)");
            }
        }
        return entries;
    }

    /**
     * Refuses (403) a model the tenant may not use and (400) steps over the operator's limit.
     * A request's own fallback model is checked with {@link #checkModel}.
     *
     * @param tenantId null for the gateway without keys
     * @param maxSteps null for the default
     */
    public void check(String tenantId, String provider, String model, Integer maxSteps) {
        if (maxSteps != null && maxSteps > maxStepsLimit) {
            throw ApiError.badRequest("'maxSteps' is " + maxSteps + "; this gateway allows at most " + maxStepsLimit
                    + " (turnstream.gateway.max-steps-limit)");
        }
        checkModel(tenantId, provider, model);
    }

    /** Refuses (403) a model the tenant may not use. */
    public void checkModel(String tenantId, String provider, String model) {
        List<String> allowed = tenantId != null && allowedPerTenant.containsKey(tenantId)
                ? allowedPerTenant.get(tenantId) : allowedForAll;
        String who = tenantId == null ? "this gateway" : "tenant " + tenantId;
        if (allowed.isEmpty()) {
            if (ProviderEndpoints.SIMULATED.equals(provider) || model.equals(fallbackModel) || prices.priceOf(model).isPresent()) {
                return;
            }
            throw new ApiError(403, who + " may not use model '" + model + "' of provider '" + provider + "': without "
                    + ALLOWED_MODELS + ", only the models this gateway has a price for (" + PriceTable.PREFIX
                    + "<model>) and the simulated provider's are allowed");
        }
        if (allowed.contains(provider + ":" + model) || allowed.contains(provider + ":*")) {
            return;
        }
        throw new ApiError(403, who + " may not use model '" + model + "' of provider '" + provider + "'; allowed: "
                + String.join(", ", allowed));
    }
}
