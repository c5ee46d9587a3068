package io.turnstream.gateway.ownership;

import io.turnstream.gateway.loop.TurnProgress;
import io.turnstream.gateway.loop.TurnRegistry;
import io.turnstream.model.TurnRequestRecord;
import java.util.List;

/** How far a turn taken over from another gateway got, as Kafka holds it ({@link TurnResumer} reads it). */
public interface TurnHistory {

    /**
     * How far the turn got. Results of tool calls the turn still waits for are handed to
     * {@code active} (which is registered first, so later results reach it through the inbox).
     *
     * @param steps the turn's step records on {@code llm.turn-requests}, in order
     */
    TurnProgress progress(TurnRequestRecord request, List<TurnRequestRecord> steps, String requestedModel,
                          TurnRegistry.ActiveTurn active);
}
