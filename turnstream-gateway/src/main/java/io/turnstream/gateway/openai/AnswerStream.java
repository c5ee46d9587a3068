package io.turnstream.gateway.openai;

import io.turnstream.gateway.chat.ItemText;
import io.turnstream.gateway.http.EventStream;
import io.turnstream.gateway.view.LiveEncoder;
import io.turnstream.gateway.view.LiveEvent;
import io.turnstream.gateway.view.StreamPosition;
import io.turnstream.model.ChangeType;
import io.turnstream.model.ItemAppend;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UIUpsert;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * A turn's live events as an OpenAI-compatible stream: the assistant's messages as text deltas (built
 * by the append rule, {@link ItemText}, from upserts and {@code llm.item-appends}), each client-side call
 * once, complete, and the turn's end. What {@link TurnAnswer} leaves out of the answer is left out here.
 * Subclasses write each API's events.
 */
abstract class AnswerStream implements LiveEncoder {

    protected final String turnId;
    protected final String model;
    private final Set<String> clientTools;
    /** Message items by id, in order of first sight; appends of other items are never started. */
    private final Map<String, ItemText> texts = new LinkedHashMap<>();
    private final Set<String> callsSent = new HashSet<>();
    /** How many client calls were sent. */
    protected int calls;

    AnswerStream(String turnId, String model, Set<String> clientTools) {
        this.turnId = turnId;
        this.model = model;
        this.clientTools = Set.copyOf(clientTools);
    }

    @Override
    public void write(LiveEvent event, StreamPosition position, EventStream client) {
        if (event instanceof LiveEvent.Append append) {
            append(append.append(), client);
        } else if (event instanceof LiveEvent.Upsert upsert) {
            if (upsert.envelope().payload() instanceof UIUpsert item) {
                item(item, client);
            } else if (upsert.envelope().payload() instanceof UITurnEvent turn && event.isTerminal()) {
                texts.forEach((itemId, text) -> end(itemId, text, client));
                finished(turn, client);
            }
        }
    }

    private void append(ItemAppend append, EventStream client) {
        ItemText text = texts.get(append.itemId());
        if (text == null || text.ended) {
            return;
        }
        String added = text.append(append.offset(), append.text());
        if (!added.isEmpty()) {
            textDelta(append.itemId(), added, client);
        }
    }

    private void item(UIUpsert item, EventStream client) {
        if (TurnAnswer.isAnswerText(item)) {
            ItemText text = texts.get(item.itemId());
            if (text == null) {
                text = new ItemText();
                text.started = true;
                texts.put(item.itemId(), text);
                textStarted(item.itemId(), client);
            }
            if (text.ended) {
                return;
            }
            String added = text.upsert(item.content());
            if (!added.isEmpty()) {
                textDelta(item.itemId(), added, client);
            }
            if (item.changeType() == ChangeType.COMPLETED) {
                end(item.itemId(), text, client);
            }
        } else if (TurnAnswer.isClientCall(item, clientTools) && item.changeType() == ChangeType.COMPLETED
                && callsSent.add(item.callId())) {
            clientCall(item, calls++, client);
        }
    }

    private void end(String itemId, ItemText text, EventStream client) {
        if (!text.ended) {
            text.ended = true;
            textEnded(itemId, text.text(), client);
        }
    }

    /** An assistant message starts. */
    protected abstract void textStarted(String itemId, EventStream client);

    protected abstract void textDelta(String itemId, String delta, EventStream client);

    /** An assistant message is whole. */
    protected abstract void textEnded(String itemId, String text, EventStream client);

    /** A client-side call, complete; {@code index} counts the calls sent. */
    protected abstract void clientCall(UIUpsert call, int index, EventStream client);

    /** The turn ended: what it ended with. */
    protected abstract void finished(UITurnEvent end, EventStream client);
}
