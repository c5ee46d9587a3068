package io.turnstream.topology;

import java.util.List;

/**
 * Decides when a streamed item has grown enough to emit again. Thresholds are the cumulative sums
 * of the gradient (last step repeating): with the seed gradient 10, 20, 40, 60, 110, 160, ...
 * An item's position is the index of the next threshold it has not yet reached.
 */
final class GradientBatcher {

    private final long[] cumulative;
    private final long lastStep;
    private final double minGrowthFraction;

    GradientBatcher(List<Integer> gradient, double minGrowthFraction) {
        this.cumulative = new long[gradient.size()];
        long sum = 0;
        for (int i = 0; i < gradient.size(); i++) {
            sum += gradient.get(i);
            cumulative[i] = sum;
        }
        this.lastStep = gradient.get(gradient.size() - 1);
        this.minGrowthFraction = minGrowthFraction;
    }

    /** Estimated tokens of text with this many code points: ceil(code points / 4). */
    static long estimateTokens(long codePoints) {
        return (codePoints + 3) / 4;
    }

    long threshold(int index) {
        if (index < cumulative.length) {
            return cumulative[index];
        }
        return cumulative[cumulative.length - 1] + (index - cumulative.length + 1) * lastStep;
    }

    /**
     * Whether an item at this position, holding {@code tokens} now and {@code emittedTokens} at its
     * last emission, should emit.
     */
    boolean reached(long tokens, long emittedTokens, int index) {
        if (tokens < threshold(index)) {
            return false;
        }
        return minGrowthFraction == 0 || tokens >= emittedTokens * (1 + minGrowthFraction);
    }

    /** The position after an emission at {@code tokens}: past every threshold already reached. */
    int indexPast(long tokens, int index) {
        int next = index;
        while (threshold(next) <= tokens) {
            next++;
        }
        return next;
    }
}
