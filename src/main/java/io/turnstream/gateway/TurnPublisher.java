package io.turnstream.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.model.StreamPayload;
import java.util.concurrent.CompletableFuture;

/** Where a running turn writes: its raw events, and a checkpoint when a model step completes. */
interface TurnPublisher {

    /** Completes when the broker has the event, or exceptionally when it never will. */
    CompletableFuture<Void> rawEvent(String runId, StreamPayload payload);

    /** Records a completed step (see {@link TurnProgress#checkpoint}), so another gateway can go on after it. */
    CompletableFuture<Void> stepDone(int step, JsonNode checkpoint);
}
