package io.turnstream.gateway.loop;

import io.turnstream.model.StreamPayload.Usage;

/**
 * A turn's token counts and cost: each step's usage is priced with the model that served it and
 * added up. Cache and reasoning counts, and the cost, are present in the sum when any step had them.
 * Model calls that failed and were made again (or fell back) are counted apart, priced the same way.
 */
final class UsageLedger {

    private final PriceTable prices;
    private Usage total;
    private Usage failed;

    /**
     * @param carried the usage of the turn's steps so far (when it was taken over from another gateway), or null
     * @param carriedFailed the usage of its failed model calls so far, or null
     */
    UsageLedger(PriceTable prices, Usage carried, Usage carriedFailed) {
        this.prices = prices;
        this.total = carried;
        this.failed = carriedFailed;
    }

    /** Records a step's usage (null when the provider reported none); returns it with its cost. */
    Usage add(String model, Usage step) {
        Usage priced = priced(model, step);
        total = plus(total, priced);
        return priced;
    }

    /** Records what a model call used that failed (null when it reported nothing); returns it with its cost. */
    Usage addFailed(String model, Usage attempt) {
        Usage priced = priced(model, attempt);
        failed = plus(failed, priced);
        return priced;
    }

    /** The turn's usage so far, or null when no step reported any. */
    Usage total() {
        return total;
    }

    /** What the turn's failed model calls used, or null when none reported any. */
    Usage failed() {
        return failed;
    }

    private Usage priced(String model, Usage usage) {
        return usage == null ? null : new Usage(usage.promptTokens(), usage.completionTokens(), usage.totalTokens(),
                usage.cacheReadTokens(), usage.cacheWriteTokens(), usage.reasoningTokens(), prices.cost(model, usage));
    }

    private static Usage plus(Usage sum, Usage priced) {
        if (priced == null || sum == null) {
            return sum == null ? priced : sum;
        }
        return sum.plus(priced);
    }
}
