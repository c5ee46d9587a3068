package io.turnstream.gateway.spend;

import io.turnstream.runtime.Settings;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * The per-tenant limits every gateway instance enforces on the same totals, counted from Kafka
 * ({@link UsageFeed}): turns running at once, turns started in any minute, and tokens and cost per UTC day.
 * All keys are {@code turnstream.gateway.tenant.*}; the budgets also per tenant
 * ({@code turnstream.gateway.tenant.<tenant>.max-tokens-per-day}, which replaces the general one for it).
 *
 * @param maxConcurrentTurns  {@code tenant.max-concurrent-turns} (32)
 * @param maxTurnsPerMinute   {@code tenant.max-turns-per-minute} (120)
 * @param tokensPerDay        {@code tenant.max-tokens-per-day}: total tokens (prompt and completion, failed model
 *                            calls included) per UTC day; 0 (the default) for no budget
 * @param costUsdPerDay       {@code tenant.max-cost-usd-per-day}: cost from the price table per UTC day; 0 (the
 *                            default) for no budget
 * @param tokensPerDayOf      per-tenant token budgets
 * @param costUsdPerDayOf     per-tenant cost budgets
 * @param lookback            {@code tenant.usage-lookback-ms} (3600000): how far before now (or the start of the UTC
 *                            day, whichever is earlier) a starting gateway reads, to know the turns still running
 */
public record SpendLimits(int maxConcurrentTurns, int maxTurnsPerMinute, long tokensPerDay, double costUsdPerDay,
                          Map<String, Long> tokensPerDayOf, Map<String, Double> costUsdPerDayOf, Duration lookback) {

    public static final String PREFIX = "turnstream.gateway.tenant.";
    static final String MAX_CONCURRENT = PREFIX + "max-concurrent-turns";
    static final String MAX_PER_MINUTE = PREFIX + "max-turns-per-minute";
    static final String TOKENS_PER_DAY = PREFIX + "max-tokens-per-day";
    static final String COST_PER_DAY = PREFIX + "max-cost-usd-per-day";

    public SpendLimits {
        tokensPerDayOf = Map.copyOf(tokensPerDayOf);
        costUsdPerDayOf = Map.copyOf(costUsdPerDayOf);
    }

    public static SpendLimits from(Settings settings) {
        Map<String, Long> tokens = new HashMap<>();
        Map<String, Double> cost = new HashMap<>();
        for (String key : settings.all().stringPropertyNames()) {
            if (!key.startsWith(PREFIX)) {
                continue;
            }
            String rest = key.substring(PREFIX.length());
            if (rest.endsWith(".max-tokens-per-day")) {
                tokens.put(rest.substring(0, rest.length() - ".max-tokens-per-day".length()),
                        notNegative(settings.getLong(key, 0), key));
            } else if (rest.endsWith(".max-cost-usd-per-day")) {
                cost.put(rest.substring(0, rest.length() - ".max-cost-usd-per-day".length()), money(settings, key));
            }
        }
        return new SpendLimits((int) positive(settings, MAX_CONCURRENT, 32), (int) positive(settings, MAX_PER_MINUTE, 120),
                notNegative(settings.getLong(TOKENS_PER_DAY, 0), TOKENS_PER_DAY), money(settings, COST_PER_DAY), tokens, cost,
                Duration.ofMillis(positive(settings, PREFIX + "usage-lookback-ms", 3_600_000)));
    }

    /** The tenant's token budget per day, 0 for none. */
    long tokensPerDay(String tenant) {
        return tokensPerDayOf.getOrDefault(tenant, tokensPerDay);
    }

    /** The tenant's cost budget per day, 0 for none. */
    double costUsdPerDay(String tenant) {
        return costUsdPerDayOf.getOrDefault(tenant, costUsdPerDay);
    }

    /** The key that sets the tenant's token budget, for messages. */
    String tokensKey(String tenant) {
        return tokensPerDayOf.containsKey(tenant) ? PREFIX + tenant + ".max-tokens-per-day" : TOKENS_PER_DAY;
    }

    /** The key that sets the tenant's cost budget, for messages. */
    String costKey(String tenant) {
        return costUsdPerDayOf.containsKey(tenant) ? PREFIX + tenant + ".max-cost-usd-per-day" : COST_PER_DAY;
    }

    private static long positive(Settings settings, String key, long fallback) {
        long value = settings.getLong(key, fallback);
        if (value < 1) {
            throw new IllegalArgumentException(key + " must be a positive whole number, got " + value);
        }
        return value;
    }

    private static long notNegative(long value, String key) {
        if (value < 0) {
            throw new IllegalArgumentException(key + " must be 0 (no budget) or more, got " + value);
        }
        return value;
    }

    private static double money(Settings settings, String key) {
        String value = settings.get(key, "0").strip();
        double amount;
        try {
            amount = Double.parseDouble(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " must be an amount in US dollars such as 12.50, got '" + value + "'");
        }
        if (amount < 0 || Double.isNaN(amount) || Double.isInfinite(amount)) {
            throw new IllegalArgumentException(key + " must be 0 (no budget) or more, got " + value);
        }
        return amount;
    }
}
