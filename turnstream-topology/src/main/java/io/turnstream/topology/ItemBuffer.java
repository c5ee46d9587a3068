package io.turnstream.topology;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The accumulated content of open items, kept as append-only chunks under a short (item handle, chunk
 * number) key; the full content is rebuilt only when an item emits. The deltas an item gains between
 * two commits go into one chunk, kept in memory and written to the store once, just before the commit
 * ({@link BeforeCommitStore} runs {@link #writeOpenChunks}), so the store and its changelog see one write
 * per item and commit instead of one per delta (profiled: the per-delta store write was the largest cost
 * of a delta). A written chunk is closed: the next delta starts a new one. What is written before a
 * commit is exactly the content of the input up to that commit; a crash before it aborts the
 * transaction, and the input is read again. A chunk also closes at {@value #MAX_CHUNK_CHARS} chars, so
 * no record grows long in a burst; it too waits for the commit, so the chunks of an item that finishes
 * between two commits never reach the store or its changelog (the store has no record cache to absorb
 * a write and its deletion within one commit). On a store without the hook (unit tests) every delta is
 * written at once, as a chunk of its own.
 *
 * <p>Each item's content, where each of its chunks starts, and its code-point total are kept in memory.
 * An emit and a {@link #tail} read the content from that copy (profiled: a range scan over the record
 * cache and RocksDB per emit was a visible part of emitting); what is committed is in the store, and
 * the copy costs what the open items hold. The copy is rebuilt from the store by a range scan on first
 * use after a restart, a restore or a rebalance.
 */
final class ItemBuffer {

    private static final byte UTF_8 = 0;
    /**
     * Deltas holding a lone surrogate (an emoji split across deltas) are kept as raw UTF-16 code
     * units: a charset would replace the lone half, and the pair would be lost when rejoined.
     */
    private static final byte CODE_UNITS = 1;

    /** Longest chunk, in UTF-16 chars, that further deltas are added to. */
    static final int MAX_CHUNK_CHARS = 512;

    private final KeyValueStore<Bytes, byte[]> chunks;
    private final Map<Long, Stats> stats = new HashMap<>();
    /** Whether open chunks wait for the commit; false on a store that cannot tell this buffer of one. */
    private final boolean deferring;
    /** Items that started a chunk since the last commit (some may have been dropped since). */
    private final List<Stats> opened = new ArrayList<>();

    ItemBuffer(KeyValueStore<Bytes, byte[]> chunks) {
        this.chunks = chunks;
        BeforeCommitStore<?, ?> hook = BeforeCommitStore.under(chunks);
        this.deferring = hook != null;
        if (hook != null) {
            hook.beforeCommit(this::writeOpenChunks);
        }
    }

    /** Adds the delta to the item's content; returns the content's length in code points, the delta's included. */
    long append(long handle, String delta) {
        Stats s = stats(handle);
        if (delta.isEmpty()) {
            return s.codePoints;
        }
        if (!s.hasUnwritten()) {
            s.startChunk();
            if (deferring) {
                opened.add(s);
            }
        } else if (s.lastChunkLength() + delta.length() > MAX_CHUNK_CHARS) {
            s.startChunk();
        }
        s.add(delta);
        if (!deferring) {
            writeChunks(s);
        }
        return s.codePoints;
    }

    /** Writes every chunk not written yet to the store, closing them; runs just before each commit. */
    void writeOpenChunks() {
        for (Stats s : opened) {
            writeChunks(s);
        }
        opened.clear();
    }

    private void writeChunks(Stats s) {
        for (int chunk = s.written; chunk < s.chunks; chunk++) {
            int from = s.chunkFrom(chunk);
            int to = chunk + 1 < s.chunks ? s.chunkFrom(chunk + 1) : s.text.length();
            chunks.put(chunkKey(s.handle, chunk), encode(s.text.substring(from, to), s.lastSurrogateAt >= from));
        }
        s.written = s.chunks;
    }

    String content(long handle) {
        Stats cached = stats.get(handle);
        if (cached != null) {
            return cached.text.toString();
        }
        StringBuilder content = new StringBuilder();
        try (KeyValueIterator<Bytes, byte[]> it = chunks.range(chunkKey(handle, 0), chunkKey(handle, Integer.MAX_VALUE))) {
            it.forEachRemaining(chunk -> content.append(decode(chunk.value)));
        }
        return content.toString();
    }

    /**
     * The content after {@code from}, up to its end, and where it ends. A trailing high surrogate
     * (an emoji whose second half has not arrived) is left for the next read, so the text returned is
     * always whole code points. Read from memory, where every chunk's place in the content is kept.
     */
    Tail tail(long handle, Cursor from) {
        Stats s = stats(handle);
        if (from.chunk() >= s.chunks) {
            return new Tail("", from);
        }
        int chunkFrom = s.chunkFrom(from.chunk());
        int chunkLength = (from.chunk() == s.chunks - 1 ? s.text.length() : s.chunkFrom(from.chunk() + 1)) - chunkFrom;
        int textFrom = chunkFrom + Math.min(from.chars(), chunkLength);
        int textTo = s.text.length();
        Cursor end = new Cursor(s.chunks - 1, s.lastChunkLength());
        if (textTo > textFrom && Character.isHighSurrogate(s.text.charAt(textTo - 1))) {
            textTo--;
            end = new Cursor(end.chunk(), end.chars() - 1);
        }
        return new Tail(s.text.substring(textFrom, textTo), end);
    }

    long codePoints(long handle) {
        return stats(handle).codePoints;
    }

    void drop(long handle) {
        Stats s = stats.remove(handle);
        int count = s == null ? countChunks(handle) : s.written;
        if (s != null) {
            // a dropped item's chunks in memory are never written, though writeOpenChunks still holds it
            s.written = s.chunks;
        }
        for (int i = 0; i < count; i++) {
            // A null put deletes without delete()'s read of the old value: one RocksDB get per chunk saved.
            chunks.put(chunkKey(handle, i), null);
        }
    }

    /**
     * Forgets the cache; called when the task closes, since the store may be restored before it runs
     * again. Open chunks go with it: a clean close commits (writing them) first, and a dirty close
     * aborts the transaction they belong to.
     */
    void forgetCache() {
        stats.clear();
        opened.clear();
    }

    private Stats stats(long handle) {
        return stats.computeIfAbsent(handle, this::rebuild);
    }

    private Stats rebuild(long handle) {
        Stats s = new Stats(handle);
        try (KeyValueIterator<Bytes, byte[]> it = chunks.range(chunkKey(handle, 0), chunkKey(handle, Integer.MAX_VALUE))) {
            it.forEachRemaining(chunk -> {
                s.startChunk();
                s.add(decode(chunk.value));
            });
        }
        s.written = s.chunks;
        return s;
    }

    private int countChunks(long handle) {
        return rebuild(handle).chunks;
    }

    /**
     * (handle, chunk) in an order-preserving variable-length form: each number as its byte count
     * followed by its significant bytes, big-endian. A short key matters: one is written, and later
     * deleted, per delta. Keys of one handle are contiguous and sorted by chunk number.
     */
    private static Bytes chunkKey(long handle, int chunk) {
        ByteBuffer key = ByteBuffer.allocate(2 + Long.BYTES + Integer.BYTES);
        putOrdered(key, handle);
        putOrdered(key, chunk);
        return Bytes.wrap(Arrays.copyOf(key.array(), key.position()));
    }

    private static void putOrdered(ByteBuffer key, long value) {
        int length = (Long.SIZE - Long.numberOfLeadingZeros(value) + 7) / 8;
        key.put((byte) length);
        for (int shift = (length - 1) * 8; shift >= 0; shift -= 8) {
            key.put((byte) (value >>> shift));
        }
    }

    /**
     * The chunk as stored. Only a chunk with a surrogate can hold a lone one, so only such a chunk is
     * scanned for one (scanning every chunk was a visible part of appending).
     */
    private static byte[] encode(String chunk, boolean hasSurrogate) {
        if (!hasSurrogate || !hasLoneSurrogate(chunk)) {
            byte[] text = chunk.getBytes(StandardCharsets.UTF_8);
            byte[] value = new byte[text.length + 1];
            value[0] = UTF_8;
            System.arraycopy(text, 0, value, 1, text.length);
            return value;
        }
        ByteBuffer units = ByteBuffer.allocate(1 + 2 * chunk.length()).put(CODE_UNITS);
        for (int i = 0; i < chunk.length(); i++) {
            units.putChar(chunk.charAt(i));
        }
        return units.array();
    }

    private static boolean hasLoneSurrogate(CharSequence text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return true;
            }
        }
        return false;
    }

    private static String decode(byte[] value) {
        if (value[0] == UTF_8) {
            return new String(value, 1, value.length - 1, StandardCharsets.UTF_8);
        }
        return ByteBuffer.wrap(value, 1, value.length - 1).slice().asCharBuffer().toString();
    }

    /** A position in an item's content: a chunk number and the UTF-16 chars of that chunk before it. */
    record Cursor(int chunk, int chars) {
        static final Cursor START = new Cursor(0, 0);
    }

    /** Text read after a cursor, and the cursor at its end. */
    record Tail(String text, Cursor end) {
    }

    /** Content, chunks and code points of one item; a surrogate pair split across two deltas counts once. */
    private static final class Stats {
        final long handle;
        int chunks;
        /** Every chunk's text, in order: the item's content. */
        final StringBuilder text = new StringBuilder();
        /** Where each chunk starts in {@link #text}. */
        private int[] chunkFroms = new int[4];
        /** Where the last chunk starts in {@link #text}. */
        int lastChunkFrom;
        /** Chunks in the store (or, rebuilt, read from it): those after them are in memory only, and the last takes deltas. */
        int written;
        long codePoints;
        boolean endsWithHighSurrogate;
        /** Where in {@link #text} the last surrogate (half of an emoji, say) is, or -1 when it has none. */
        int lastSurrogateAt = -1;

        Stats(long handle) {
            this.handle = handle;
        }

        void startChunk() {
            if (chunks == chunkFroms.length) {
                chunkFroms = Arrays.copyOf(chunkFroms, 2 * chunks);
            }
            lastChunkFrom = text.length();
            chunkFroms[chunks++] = lastChunkFrom;
        }

        int chunkFrom(int chunk) {
            return chunkFroms[chunk];
        }

        boolean hasUnwritten() {
            return written < chunks;
        }

        int lastChunkLength() {
            return text.length() - lastChunkFrom;
        }

        /** Adds text at the end of the last chunk, counting its code points. */
        void add(String delta) {
            for (int i = delta.length() - 1; i >= 0; i--) {
                if (Character.isSurrogate(delta.charAt(i))) {
                    lastSurrogateAt = text.length() + i;
                    break;
                }
            }
            text.append(delta);
            codePoints += delta.codePointCount(0, delta.length());
            if (endsWithHighSurrogate && Character.isLowSurrogate(delta.charAt(0))) {
                codePoints--;
            }
            endsWithHighSurrogate = Character.isHighSurrogate(delta.charAt(delta.length() - 1));
        }
    }
}
