package io.turnstream.gateway.loop;

import io.turnstream.gateway.provider.RetryPolicy;
import java.time.Duration;

/**
 * The settings the agent loop runs a turn with: a part of the gateway's settings.
 *
 * @param maxTokens the output token limit of each model call
 * @param thinkingBudget the extended-thinking budget, or null for none
 * @param toolResultTimeout how long a step waits for its tool results
 */
public record LoopConfig(int maxTokens, Integer thinkingBudget, RetryPolicy retry, Duration toolResultTimeout,
                         PriceTable prices, CompactionConfig compaction) {

    /** The prefix of the gateway's settings in the config file. */
    public static final String PREFIX = "turnstream.gateway.";
}
