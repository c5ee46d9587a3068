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
     * @throws UnreadableRecords when a record of the turn that has not ended cannot be read
     */
    TurnProgress progress(TurnRequestRecord request, List<TurnRequestRecord> steps, String requestedModel,
                          TurnRegistry.ActiveTurn active);

    /**
     * A turn that has not ended, of which Kafka holds a record that cannot be read (its end, maybe): resumed, it would
     * run again at every takeover, so it ends instead.
     */
    final class UnreadableRecords extends RuntimeException {
        private final transient TurnProgress readable;

        public UnreadableRecords(TurnProgress readable, String why) {
            super(why);
            this.readable = readable;
        }

        /** What the records that could be read say. */
        public TurnProgress readable() {
            return readable;
        }
    }
}
