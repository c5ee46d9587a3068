package io.turnstream.topology;

import io.turnstream.model.ItemAppend;
import io.turnstream.topology.DeadlineQueue.Kind;
import io.turnstream.topology.ItemBuffer.Cursor;
import io.turnstream.topology.ItemBuffer.Tail;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;

/**
 * The live text of streaming items on {@code llm.item-appends}: while a message or reasoning item
 * streams, the text it gained is sent at most once per punctuation tick, and what is left when it
 * ends. Held user messages and tool calls have no appends.
 *
 * <p>An item with unsent text has one {@link Kind#APPEND} deadline, armed by the first delta after
 * an append, so a delta writes nothing more than before except once per tick. The append cursor
 * (offset and chunk position) is in the item's state and the per-turn {@code seq} in the turn's, both
 * written in the transaction that sends the append: after a crash or restore, appends resume where the
 * committed ones ended, none lost and none doubled.
 */
final class ItemAppends {

    private final ProcessorContext<String, byte[]> context;
    private final TopologyConfig config;
    private final DeadlineQueue deadlines;
    private final ItemBuffer buffer;

    ItemAppends(ProcessorContext<String, byte[]> context, TopologyConfig config, DeadlineQueue deadlines, ItemBuffer buffer) {
        this.context = context;
        this.config = config;
        this.deadlines = deadlines;
        this.buffer = buffer;
    }

    /** The item gained text: arms its append for the next tick unless armed. Returns whether the item changed. */
    boolean textAdded(String itemKey, ItemState item) {
        if (!item.emitsWhileStreaming() || item.appendDueMs != 0) {
            return false;
        }
        item.appendDueMs = context.currentSystemTimeMs();
        deadlines.schedule(item.appendDueMs, Kind.APPEND, itemKey);
        return true;
    }

    /** The item's append is due: sends the text it gained since the last one. */
    void sendPending(TurnState turn, ItemState item) {
        item.appendDueMs = 0;
        Tail tail = buffer.tail(item.handle, new Cursor(item.appendedChunk, item.appendedChars));
        item.appendedChunk = tail.end().chunk();
        item.appendedChars = tail.end().chars();
        send(turn, item, tail.text());
    }

    /**
     * The item ends with this content: sends what of it was not sent yet. The final content decides,
     * so the last append always ends where the completed upsert's content ends.
     */
    void sendRest(String itemKey, TurnState turn, ItemState item, String content) {
        disarm(itemKey, item);
        if (!item.emitsWhileStreaming() || content.codePointCount(0, content.length()) <= item.appendedCodePoints) {
            return;
        }
        send(turn, item, content.substring(content.offsetByCodePoints(0, Math.toIntExact(item.appendedCodePoints))));
    }

    /** Cancels the item's armed append, if any. */
    void disarm(String itemKey, ItemState item) {
        if (item.appendDueMs != 0) {
            deadlines.cancel(item.appendDueMs, Kind.APPEND, itemKey);
            item.appendDueMs = 0;
        }
    }

    private void send(TurnState turn, ItemState item, String text) {
        if (text.isEmpty()) {
            return;
        }
        long now = context.currentSystemTimeMs();
        ItemAppend append = new ItemAppend(turn.turnId, item.itemId, ++turn.appendSeq, item.appendedCodePoints, text, now);
        byte[] bytes = config.wireFormat().write(config.topics().itemAppends(), append);
        context.forward(new Record<>(turn.turnId, bytes, now, TurnTrace.headers(turn)), UpsertTopology.ITEM_APPENDS_SINK);
        item.appendedCodePoints += text.codePointCount(0, text.length());
    }
}
