package io.turnstream.gateway.loop;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.model.ControlMessage;
import io.turnstream.model.StreamPayload;
import io.turnstream.runtime.TraceContext;
import java.time.Clock;
import java.util.concurrent.CompletableFuture;

/** Where a running turn writes: its raw events, a checkpoint when a model step completes, and its owner's decisions. */
public interface TurnPublisher {

    /**
     * Sends one event of a run, with the turn's trace context in {@code trace_context} and as
     * headers; completes when the broker has it, or exceptionally when it never will.
     */
    CompletableFuture<Void> rawEvent(String runId, TraceContext trace, StreamPayload payload);

    /** Records a completed step (see {@link TurnProgress#checkpoint}), so another gateway can go on after it. */
    CompletableFuture<Void> stepDone(int step, JsonNode checkpoint);

    /** Sends a decision of the turn's owner to {@code llm.control} (an approval of a tool its thread allows). */
    CompletableFuture<Void> control(ControlMessage message);

    /**
     * Makes {@code writes} (sends through this publisher) commit in one transaction: a step's last
     * events and its checkpoint, so that no reader sees the one without the other.
     */
    default void atomically(Runnable writes) {
        writes.run();
    }

    /**
     * The turn cannot write what it must (its end threw as it was sent): the open transaction must not commit
     * without it. It is refused, so the partition is taken over again and the turn goes on from what was committed.
     */
    void failTransaction(Throwable why);

    /** The time the turn's events are stamped with. */
    Clock clock();
}
