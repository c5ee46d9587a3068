package io.turnstream.gateway.loop;

import io.turnstream.gateway.provider.FinishReasons;

/**
 * A step that stopped at the output token limit without tool calls is continued: the model is asked
 * to go on where it stopped, up to {@link #LIMIT} times per turn, as the agent loop of the design
 * documents does. After that the turn ends with finish reason {@code length}.
 */
public final class MaxTokensContinuation {

    public static final int LIMIT = 3;
    public static final String PROMPT = "Your answer was cut off at the output token limit. Continue exactly where it "
            + "stopped, without repeating anything.";

    private int count;

    /** @param count continuations the turn made already (on another gateway, before it was taken over) */
    MaxTokensContinuation(int count) {
        this.count = count;
    }

    /** Whether a step that ended with this finish reason (and no tool calls) is continued; counts it when so. */
    boolean shouldContinue(String finishReason) {
        if (!FinishReasons.LENGTH.equals(finishReason) || count >= LIMIT) {
            return false;
        }
        count++;
        return true;
    }

    /** How many continuations the turn made: they do not count against its step limit. */
    int count() {
        return count;
    }
}
