package io.turnstream.gateway.loop;

import io.turnstream.gateway.provider.RetryPolicy;
import java.time.Duration;

/**
 * The settings the agent loop runs a turn with: a part of the gateway's settings.
 *
 * @param maxTokens the output token limit of each model call
 * @param thinkingBudget the extended-thinking budget, or null for none
 * @param toolResultTimeout how long a step waits for its tool results
 * @param onDeny what a step's denied tool call does to the turn
 */
public record LoopConfig(int maxTokens, Integer thinkingBudget, RetryPolicy retry, Duration toolResultTimeout,
                         PriceTable prices, CompactionConfig compaction, OnDeny onDeny) {

    /** The prefix of the gateway's settings in the config file. */
    public static final String PREFIX = "turnstream.gateway.";

    /** {@code turnstream.gateway.approvals.on-deny}: what a denied tool call does to its turn. */
    public enum OnDeny {
        /** The turn ends after the step's results, without calling the model again (the default). */
        STOP,
        /** The model gets the denial as the call's output and goes on. */
        CONTINUE;

        public static OnDeny parse(String value) {
            try {
                return valueOf(value.strip().toUpperCase(java.util.Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(PREFIX + "approvals.on-deny must be stop or continue, got '" + value + "'");
            }
        }
    }
}
