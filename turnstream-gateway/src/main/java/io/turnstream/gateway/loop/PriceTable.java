package io.turnstream.gateway.loop;

import io.turnstream.model.StreamPayload.Usage;
import io.turnstream.runtime.Settings;
import java.util.Map;
import java.util.Optional;

/**
 * What tokens cost, per model, in US dollars per million tokens: input, output, cache reads and
 * cache writes. A model's price is the entry whose name is the longest prefix of the model id, so
 * {@code claude-sonnet-4} prices {@code claude-sonnet-4-5-20250929}. Configure with
 * {@code turnstream.gateway.price.<model prefix>=input,output[,cache read[,cache write]]}; cache
 * prices default to the input price. A model without a price gets no cost.
 */
public final class PriceTable {

    public static final String PREFIX = LoopConfig.PREFIX + "price.";

    /** USD per million tokens. */
    public record Price(double input, double output, double cacheRead, double cacheWrite) {
    }

    /**
     * List prices (standard tier, 5-minute cache writes) as published on 2026-11-23 by Anthropic
     * (platform.claude.com/docs/en/about-claude/pricing) and OpenAI (platform.openai.com/docs/pricing);
     * long-context surcharges and batch discounts are not modelled. Override them in the config file
     * when they change. OpenAI bills cache writes as plain input.
     * The gpt-5 family and the o-series were added from OpenAI's standard-tier list
     * (platform.openai.com/docs/pricing) as published in December 2025; models without a cached-input
     * price there (the -pro models) bill cache reads as plain input.
     */
    private static final Map<String, Price> DEFAULTS = Map.ofEntries(
            Map.entry("claude-opus-4", new Price(15, 75, 1.5, 18.75)),
            Map.entry("claude-opus-4-5", new Price(5, 25, 0.5, 6.25)),
            Map.entry("claude-opus-4-6", new Price(5, 25, 0.5, 6.25)),
            Map.entry("claude-opus-4-7", new Price(5, 25, 0.5, 6.25)),
            Map.entry("claude-opus-4-8", new Price(5, 25, 0.5, 6.25)),
            Map.entry("claude-sonnet-4", new Price(3, 15, 0.3, 3.75)),
            Map.entry("claude-haiku-4", new Price(1, 5, 0.1, 1.25)),
            Map.entry("gpt-4.1", new Price(2, 8, 0.5, 2)),
            Map.entry("gpt-4.1-mini", new Price(0.4, 1.6, 0.1, 0.4)),
            Map.entry("gpt-4.1-nano", new Price(0.1, 0.4, 0.025, 0.1)),
            Map.entry("gpt-4o", new Price(2.5, 10, 1.25, 2.5)),
            Map.entry("gpt-4o-mini", new Price(0.15, 0.6, 0.075, 0.15)),
            Map.entry("gpt-5", new Price(1.25, 10, 0.125, 1.25)),
            Map.entry("gpt-5-mini", new Price(0.25, 2, 0.025, 0.25)),
            Map.entry("gpt-5-nano", new Price(0.05, 0.4, 0.005, 0.05)),
            Map.entry("gpt-5-pro", new Price(15, 120, 15, 15)),
            Map.entry("gpt-5.1-codex-mini", new Price(0.25, 2, 0.025, 0.25)),
            Map.entry("gpt-5.2", new Price(1.75, 14, 0.175, 1.75)),
            Map.entry("gpt-5.2-pro", new Price(21, 168, 21, 21)),
            Map.entry("o1", new Price(15, 60, 7.5, 15)),
            Map.entry("o1-mini", new Price(1.1, 4.4, 0.55, 1.1)),
            Map.entry("o1-pro", new Price(150, 600, 150, 150)),
            Map.entry("o3", new Price(2, 8, 0.5, 2)),
            Map.entry("o3-mini", new Price(1.1, 4.4, 0.55, 1.1)),
            Map.entry("o3-pro", new Price(20, 80, 20, 20)),
            Map.entry("o4-mini", new Price(1.1, 4.4, 0.275, 1.1)),
            Map.entry("turnstream-simulated", new Price(0, 0, 0, 0)));

    private final ModelTable<Price> prices;

    private PriceTable(ModelTable<Price> prices) {
        this.prices = prices;
    }

    public static PriceTable from(Settings settings) {
        return new PriceTable(ModelTable.from(settings, PREFIX, DEFAULTS, PriceTable::parse));
    }

    private static Price parse(String key, String value) {
        String[] parts = value.split(",");
        try {
            if (parts.length < 2 || parts.length > 4) {
                throw new NumberFormatException();
            }
            double input = Double.parseDouble(parts[0].strip());
            double output = Double.parseDouble(parts[1].strip());
            double cacheRead = parts.length > 2 ? Double.parseDouble(parts[2].strip()) : input;
            double cacheWrite = parts.length > 3 ? Double.parseDouble(parts[3].strip()) : input;
            return new Price(input, output, cacheRead, cacheWrite);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " must be 'input,output[,cache read[,cache write]]' in USD per "
                    + "million tokens, got '" + value + "'");
        }
    }

    public Optional<Price> priceOf(String model) {
        return prices.lookup(model);
    }

    /** The cost of one model call's usage in USD, or null when the model has no price. */
    public Double cost(String model, Usage usage) {
        return priceOf(model).map(price -> {
            long cacheRead = usage.cacheReadTokens() == null ? 0 : usage.cacheReadTokens();
            long cacheWrite = usage.cacheWriteTokens() == null ? 0 : usage.cacheWriteTokens();
            long uncached = Math.max(0, usage.promptTokens() - cacheRead - cacheWrite);
            return (uncached * price.input() + cacheRead * price.cacheRead() + cacheWrite * price.cacheWrite()
                    + usage.completionTokens() * price.output()) / 1_000_000;
        }).orElse(null);
    }
}
