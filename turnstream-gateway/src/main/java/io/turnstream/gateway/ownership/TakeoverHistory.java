package io.turnstream.gateway.ownership;

import io.turnstream.gateway.loop.TurnProgress;
import io.turnstream.gateway.loop.TurnRegistry;
import io.turnstream.model.TurnRequestRecord;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * What Kafka holds of the turns one takeover of a partition resumes, read for all of them at once ({@link
 * TurnResumer#turnsOf}). A turn asks from its own thread; the reads wait until the takeover has registered every
 * turn it resumes ({@link #registered()}), so that a cancel or a tool result written after the reads reaches each of
 * them through the inbox.
 */
final class TakeoverHistory implements TurnHistory {

    private final TurnResumer.TurnLog log;
    private final CompletableFuture<Void> registered = new CompletableFuture<>();

    TakeoverHistory(TurnResumer.TurnLog log) {
        this.log = log;
    }

    /** Every turn of the takeover is registered: reads may start. */
    void registered() {
        registered.complete(null);
    }

    @Override
    public TurnProgress progress(TurnRequestRecord request, List<TurnRequestRecord> steps, String requestedModel,
                                 TurnRegistry.ActiveTurn active) {
        registered.join();
        return TurnResumer.progress(request, steps, requestedModel, active, log);
    }
}
