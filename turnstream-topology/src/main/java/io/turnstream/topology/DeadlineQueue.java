package io.turnstream.topology;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Wall-clock deadlines in a store keyed by due time, so the punctuator reads only what is due with
 * one range scan: the work of a tick is proportional to the deadlines due, not to the items held.
 * Keys are (due time, big-endian) + kind + target, which sort by due time. The kind is stored as
 * its ordinal: new kinds go at the end.
 *
 * <p>Taken deadlines leave tombstones at the low end of the key space, and a scan from time 0 would
 * step over all of them on every tick (profiled: the largest part of a tick). So the queue remembers a
 * lower bound of what it holds and scans from there; after a restart it starts from 0 once.
 */
final class DeadlineQueue {

    enum Kind {
        /** An item's batch timeout: emit its pending content. */
        BATCH,
        /** A turn's idle watchdog: close it with TURN_TIMEOUT. */
        IDLE,
        /** A closed turn's marker expires. */
        FORGET,
        /**
         * Earlier versions armed appends here; appends are now armed in memory (see {@link ItemAppends}).
         * Kept so the ordinals of the kinds after it, and any such entry still stored, stay readable.
         */
        APPEND,
        /** A closed turn's keys on {@code llm.item-state} are deleted (the target lists them). */
        TOMBSTONE
    }

    /** A due deadline: its time, what kind, and the state key it concerns. */
    record Deadline(long dueMs, Kind kind, String target) {
    }

    private static final byte[] NO_VALUE = new byte[0];

    private final KeyValueStore<Bytes, byte[]> store;
    /** No deadline in the store is due before this. */
    private long earliestDueMs;

    DeadlineQueue(KeyValueStore<Bytes, byte[]> store) {
        this.store = store;
    }

    void schedule(long dueMs, Kind kind, String target) {
        store.put(key(dueMs, kind, target), NO_VALUE);
        earliestDueMs = Math.min(earliestDueMs, dueMs);
    }

    void cancel(long dueMs, Kind kind, String target) {
        // A null put deletes without delete()'s read of the old value.
        store.put(key(dueMs, kind, target), null);
    }

    /** Removes and returns up to {@code limit} deadlines due at or before {@code nowMs}, earliest first. */
    List<Deadline> takeDue(long nowMs, int limit) {
        List<Deadline> due = new ArrayList<>();
        if (earliestDueMs > nowMs) {
            return due;
        }
        try (KeyValueIterator<Bytes, byte[]> it = store.range(timePrefix(earliestDueMs), timePrefix(nowMs + 1))) {
            while (it.hasNext() && due.size() < limit) {
                KeyValue<Bytes, byte[]> entry = it.next();
                due.add(parse(entry.key.get()));
            }
        }
        due.forEach(d -> cancel(d.dueMs(), d.kind(), d.target()));
        // Everything up to now was taken, unless the limit stopped the scan at the last one taken.
        earliestDueMs = due.size() < limit ? nowMs + 1 : due.get(due.size() - 1).dueMs();
        return due;
    }

    private static Bytes timePrefix(long ms) {
        return Bytes.wrap(ByteBuffer.allocate(Long.BYTES).putLong(ms).array());
    }

    private static Bytes key(long dueMs, Kind kind, String target) {
        byte[] targetBytes = target.getBytes(StandardCharsets.UTF_8);
        return Bytes.wrap(ByteBuffer.allocate(Long.BYTES + 1 + targetBytes.length)
                .putLong(dueMs).put((byte) kind.ordinal()).put(targetBytes).array());
    }

    private static Deadline parse(byte[] key) {
        ByteBuffer buffer = ByteBuffer.wrap(key);
        long due = buffer.getLong();
        Kind kind = Kind.values()[buffer.get()];
        String target = new String(key, buffer.position(), buffer.remaining(), StandardCharsets.UTF_8);
        return new Deadline(due, kind, target);
    }
}
