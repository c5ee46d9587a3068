package io.turnstream.gateway.loop;

import io.turnstream.runtime.Settings;

/**
 * When and how a turn's conversation is compacted ({@code turnstream.gateway.compaction.*}).
 *
 * @param windows each model's context window
 * @param threshold the share of the window (0 to 1) a step may fill before the conversation is
 *                  compacted ahead of the next step; the design documents' 90 %
 * @param keepRecentTokens at most this many (estimated) tokens of the latest steps are kept word for
 *                         word after the summary; never more than half of the conversation
 */
public record CompactionConfig(ContextWindows windows, double threshold, long keepRecentTokens) {

    public static final String PREFIX = LoopConfig.PREFIX + "compaction.";

    public static CompactionConfig from(Settings settings) {
        String thresholdKey = PREFIX + "threshold";
        String value = settings.get(thresholdKey, "0.9");
        double threshold;
        try {
            threshold = Double.parseDouble(value.strip());
        } catch (NumberFormatException e) {
            threshold = Double.NaN;
        }
        if (!(threshold > 0 && threshold <= 1)) {
            throw new IllegalArgumentException(thresholdKey + " must be a share of the context window above 0 and at "
                    + "most 1, got '" + value + "'");
        }
        long unknownModel = settings.getLong(PREFIX + "default-context-window", ContextWindows.DEFAULT_WINDOW);
        return new CompactionConfig(ContextWindows.from(settings, unknownModel), threshold,
                Math.max(0, settings.getLong(PREFIX + "keep-recent-tokens", 20_000)));
    }

    /** Whether a step that filled this much of the model's window calls for compaction before the next one. */
    public boolean nearlyFull(String model, long contextTokens) {
        return contextTokens >= threshold * windows.of(model);
    }
}
