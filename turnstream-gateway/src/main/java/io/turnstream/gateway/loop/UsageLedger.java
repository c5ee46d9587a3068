package io.turnstream.gateway.loop;

import io.turnstream.model.StreamPayload.Usage;

/**
 * A turn's token counts and cost: each step's usage is priced with the model that served it and
 * added up. Cache and reasoning counts, and the cost, are present in the sum when any step had them.
 */
final class UsageLedger {

    private final PriceTable prices;
    private Usage total;

    /** @param carried the usage of the turn's steps so far (when it was taken over from another gateway), or null */
    UsageLedger(PriceTable prices, Usage carried) {
        this.prices = prices;
        this.total = carried;
    }

    /** Records a step's usage (null when the provider reported none); returns it with its cost. */
    Usage add(String model, Usage step) {
        if (step == null) {
            return null;
        }
        Usage priced = new Usage(step.promptTokens(), step.completionTokens(), step.totalTokens(), step.cacheReadTokens(),
                step.cacheWriteTokens(), step.reasoningTokens(), prices.cost(model, step));
        total = total == null ? priced : total.plus(priced);
        return priced;
    }

    /** The turn's usage so far, or null when no step reported any. */
    Usage total() {
        return total;
    }
}
