package io.turnstream.gateway.thread;

import io.turnstream.gateway.loop.LoopConfig;
import io.turnstream.runtime.Settings;
import java.util.Locale;

/**
 * What a message to a thread whose turn is still running does ({@value #KEY}). A thread's turns run one after
 * another on the gateway that owns its partition of {@code llm.turn-requests}, in the order they were requested.
 */
public enum BusyThreadPolicy {
    /**
     * The default: the request is refused with a 409 naming the running turn. Two requests that reach different
     * gateways at the same moment can both be accepted; the later then ends at once with {@code turn_error}
     * {@code THREAD_BUSY}.
     */
    REJECT,
    /** The turn is accepted and starts when the running turn has ended. */
    ENQUEUE,
    /** The running turn is cancelled ({@code aborted}, reason {@value #INTERRUPTED}), then the new one starts. */
    INTERRUPT;

    public static final String KEY = LoopConfig.PREFIX + "thread.busy-policy";
    public static final String INTERRUPTED = "interrupted by a new message to the thread";

    public static BusyThreadPolicy from(Settings settings) {
        String value = settings.get(KEY, "reject");
        try {
            return valueOf(value.strip().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(KEY + " must be reject, enqueue or interrupt, got '" + value + "'");
        }
    }
}
