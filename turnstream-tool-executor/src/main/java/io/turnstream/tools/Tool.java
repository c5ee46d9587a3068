package io.turnstream.tools;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.Optional;

/**
 * A tool the executor can run: the service-provider interface. Implementations are found with
 * {@link java.util.ServiceLoader}: list the class in {@code META-INF/services/io.turnstream.tools.Tool}
 * and give it a public no-argument constructor. The built-in tools are registered the same way.
 */
public interface Tool {

    /** The name the model calls it by: letters, digits, {@code _} and {@code -}, at most 64. */
    String name();

    /** What the tool does, for the model. */
    String description();

    /** JSON schema of the arguments (an object schema); a call whose arguments do not match is answered with an error and not run. */
    JsonNode inputSchema();

    /**
     * True when the tool only reads: it may run in parallel with the other concurrency-safe calls of its turn.
     * A call of an unsafe tool waits for the turn's running calls to finish and then runs alone.
     */
    boolean concurrencySafe();

    /**
     * Whether running a call twice has the same effect as running it once. A non-idempotent call is recorded
     * as started before it runs; if the executor dies before its result is published, the call is answered
     * with an "outcome unknown" error instead of being run again.
     */
    default boolean idempotent() {
        return concurrencySafe();
    }

    /** The tool's own timeout when the configuration sets none for it; always capped at the configured maximum. */
    default Optional<Duration> timeout() {
        return Optional.empty();
    }

    /**
     * Runs one call and returns its output: text as a JSON string, or any JSON value. Throw
     * {@link ToolException} for an error the model should read; an {@link java.io.IOException} is reported the
     * same way; any other exception counts as a crash of the tool. Long work should call
     * {@link ToolContext#checkCancelled()} between steps and stop when interrupted: a call that was
     * cancelled or timed out has already been answered.
     */
    JsonNode execute(JsonNode arguments, ToolContext context) throws Exception;
}
