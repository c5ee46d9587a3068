package io.turnstream.topology;

import io.turnstream.model.ItemType;

/**
 * What the topology remembers of one open item, keyed by run id and item id in the {@code items}
 * store. The content itself lives in {@link ItemBuffer}; this record is stored only when the item
 * emits or arms its batch timer, never per delta.
 */
final class ItemState {

    String itemId;
    ItemType itemType;
    /** Identifies the item's content chunks: the offset of its {@code item_start} record, unique per partition. */
    long handle;
    /** User messages are held: one {@code completed} upsert and nothing before it. */
    boolean held;
    String origin;
    String toolName;
    String callId;
    /** The {@code version} of the last upsert emitted for this item. */
    long version;
    /** Position in the batch gradient: the next threshold this item has not reached. */
    int thresholdIndex;
    /** Code points of content already emitted; content beyond it is pending. */
    long emittedCodePoints;
    /** When the batch timer is due, or 0 when no timer is armed. */
    long timerDueMs;
    /** Code points already sent on {@code llm.item-appends}: the offset of the next append. */
    long appendedCodePoints;
    /** Where the sent text ends in the item's chunks (see {@link ItemBuffer.Cursor}). */
    int appendedChunk;
    int appendedChars;
    /**
     * Wall-clock time of the item's last delta, in memory only ({@code transient}: not stored), so a
     * delta writes nothing: the batch timer, armed once, is pushed back to "last delta + timeout" when
     * it falls due after a later delta. 0 on an object read from the store (after a restore, or once
     * the cache let it go): no recent delta, so the timer emits what is pending.
     */
    transient long lastDeltaMs;
    /**
     * Whether this object's item is among {@link ItemAppends}' armed ones, in memory only: the deltas after the
     * first of a tick then look nothing up. False on an object read from the store, which only costs the next
     * delta a lookup that finds the item armed.
     */
    transient boolean appendArmed;

    /** What an item emits, and when. */
    enum Mode {
        /** An agent's message or reasoning: {@code created}, {@code updated} on the gradient, appends, {@code completed}. */
        STREAMING,
        /** A user message: one {@code completed} upsert and nothing before it. */
        HELD,
        /** A tool call (whose arguments have appends), a tool output or an error: one upsert when done. */
        AT_COMPLETION
    }

    Mode mode() {
        if (!itemType.streamed()) {
            return Mode.AT_COMPLETION;
        }
        return held ? Mode.HELD : Mode.STREAMING;
    }

    boolean emitsWhileStreaming() {
        return mode() == Mode.STREAMING;
    }

    /** Its text goes to {@code llm.item-appends} as it grows: a streaming item's, and a tool call's arguments. */
    boolean hasAppends() {
        return emitsWhileStreaming() || itemType == ItemType.FUNCTION_CALL;
    }

    boolean createdEmitted() {
        return version > 0;
    }
}
