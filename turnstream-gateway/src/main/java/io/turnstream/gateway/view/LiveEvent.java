package io.turnstream.gateway.view;

import io.turnstream.model.ItemAppend;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UiPayloadType;
import io.turnstream.model.UpsertEnvelope;

/**
 * One record of a turn's live view: a full-state upsert from {@code llm.upserts} or new text from
 * {@code llm.item-appends}. Each stream has its own per-turn {@code seq}.
 */
public sealed interface LiveEvent permits LiveEvent.Upsert, LiveEvent.Append {

    long seq();

    /** True for the turn's {@code turn_completed} or {@code turn_error}: nothing follows it. */
    default boolean isTerminal() {
        return this instanceof Upsert upsert && upsert.envelope().payload() instanceof UITurnEvent event
                && event.type() != UiPayloadType.TURN_STARTED;
    }

    record Upsert(UpsertEnvelope envelope) implements LiveEvent {
        @Override
        public long seq() {
            return envelope.seq();
        }
    }

    record Append(ItemAppend append) implements LiveEvent {
        @Override
        public long seq() {
            return append.seq();
        }
    }
}
