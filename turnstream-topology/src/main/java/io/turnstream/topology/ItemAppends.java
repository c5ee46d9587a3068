package io.turnstream.topology;

import io.turnstream.model.ItemAppend;
import io.turnstream.topology.ItemBuffer.Cursor;
import io.turnstream.topology.ItemBuffer.Tail;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import org.apache.kafka.streams.processor.api.Record;

/**
 * The live text of streaming items on {@code llm.item-appends}: while a message or reasoning item
 * streams, or a tool call's arguments, the text it gained is sent at most once per punctuation tick,
 * and what is left when it ends. Held user messages, tool outputs and errors have no appends.
 *
 * <p>An item with unsent text is armed in memory by its first delta after an append, and the next
 * tick sends it, so a delta writes nothing to the stores (profiled: a stored deadline per item and
 * tick, and its removal, were a visible part of the hot path). The append cursor (offset and chunk
 * position) is in the item's state and the per-turn {@code seq} in the turn's, both written in the
 * transaction that sends the append: after a crash or restore, appends resume where the committed
 * ones ended, none lost and none doubled. What was armed and not sent is found again on the first
 * tick after the task starts, which arms every open streaming item.
 */
final class ItemAppends {

    private final Sinks sinks;
    private final LongSupplier clock;
    private final TopologyConfig config;
    private final ItemBuffer buffer;
    /** Item keys with text not sent yet, and when each was armed. */
    private final Map<String, Long> armed = new HashMap<>();

    ItemAppends(Sinks sinks, LongSupplier clock, TopologyConfig config, ItemBuffer buffer) {
        this.sinks = sinks;
        this.clock = clock;
        this.config = config;
        this.buffer = buffer;
    }

    /**
     * The item gained text: arms its append for the next tick unless armed. The item's own flag answers for
     * every delta after the first of a tick (profiled: a map put per delta was about 1% of the flood's stream
     * thread); the map stays the record of what is armed, since the cache may hand out a new object for the item.
     */
    void textAdded(String itemKey, ItemState item) {
        if (!item.appendArmed && item.hasAppends()) {
            item.appendArmed = true;
            armed.putIfAbsent(itemKey, clock.getAsLong());
        }
    }

    /**
     * The armed item keys, disarmed, by arming time and then key (the order appends always had): the
     * tick hands each one's current object to {@link #taken} and sends it ({@link #sendPending}).
     */
    List<String> takeArmed() {
        List<String> due = armed.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().thenComparing(Map.Entry.comparingByKey()))
                .map(Map.Entry::getKey)
                .toList();
        armed.clear();
        return due;
    }

    /** The item, armed until {@link #takeArmed}, is not any more: its next delta arms it again. */
    void taken(ItemState item) {
        item.appendArmed = false;
    }

    /** Sends the text the item gained since the last append; returns whether the item's cursor moved. */
    boolean sendPending(TurnState turn, ItemState item) {
        Tail tail = buffer.tail(item.handle, new Cursor(item.appendedChunk, item.appendedChars));
        boolean moved = tail.end().chunk() != item.appendedChunk || tail.end().chars() != item.appendedChars;
        item.appendedChunk = tail.end().chunk();
        item.appendedChars = tail.end().chars();
        send(turn, item, tail.text());
        return moved;
    }

    /**
     * The item ends with this content: sends what of it was not sent yet. The final content decides,
     * so the last append always ends where the completed upsert's content ends.
     */
    void sendRest(String itemKey, TurnState turn, ItemState item, String content) {
        disarm(itemKey);
        if (!item.hasAppends() || content.codePointCount(0, content.length()) <= item.appendedCodePoints) {
            return;
        }
        send(turn, item, content.substring(content.offsetByCodePoints(0, Math.toIntExact(item.appendedCodePoints))));
    }

    /** Forgets the item's armed append, if any. */
    void disarm(String itemKey) {
        armed.remove(itemKey);
    }

    /** Forgets every armed append; called when the task (re)initialises. */
    void forget() {
        armed.clear();
    }

    private void send(TurnState turn, ItemState item, String text) {
        if (text.isEmpty()) {
            return;
        }
        long now = clock.getAsLong();
        ItemAppend append = new ItemAppend(turn.turnId, item.itemId, ++turn.appendSeq, item.appendedCodePoints, text, now);
        byte[] bytes = config.wireFormat().write(config.topics().itemAppends(), append);
        sinks.send(UpsertTopology.ITEM_APPENDS_SINK, new Record<>(turn.turnId, bytes, now, TurnTrace.headers(turn)));
        item.appendedCodePoints += text.codePointCount(0, text.length());
    }
}
