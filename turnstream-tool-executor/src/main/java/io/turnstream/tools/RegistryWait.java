package io.turnstream.tools;

import io.turnstream.schema.SchemaRegistryException;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The executor waiting for a schema registry that cannot be reached, for one of the things it holds back meanwhile
 * (reading tool calls, publishing results): the cause, which {@code /health} names while it lasts, and how many tries
 * in a row failed, which the backoff grows with. Logged once when it starts and once when it ends, not at every try.
 */
final class RegistryWait {

    private static final Logger LOG = LoggerFactory.getLogger(RegistryWait.class);

    private final String instanceId;
    /** What is held back, as {@code /health} names it: {@code tool-calls}, {@code tool-results}. */
    private final String holding;
    /** Set by the executor's loop, read by {@code /health}. */
    private volatile SchemaRegistryException cause;
    private int failuresInARow;

    RegistryWait(String instanceId, String holding) {
        this.instanceId = instanceId;
        this.holding = holding;
    }

    String holding() {
        return holding;
    }

    /** Another try failed for want of the registry; returns the failures in a row, for the backoff. */
    int failed(SchemaRegistryException registry, String what) {
        if (cause == null) {
            LOG.warn("tool executor {} cannot {} for now and tries again after a backoff: {}", instanceId, what,
                    registry.getMessage());
        }
        cause = registry;
        return ++failuresInARow;
    }

    /** The wait is over ({@code why}); a no-op while not waiting. */
    void over(String why) {
        if (cause != null) {
            LOG.info("tool executor {} no longer waits for the schema registry: {}", instanceId, why);
            cause = null;
            failuresInARow = 0;
        }
    }

    Optional<SchemaRegistryException> cause() {
        return Optional.ofNullable(cause);
    }
}
