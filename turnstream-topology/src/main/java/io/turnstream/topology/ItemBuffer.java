package io.turnstream.topology;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.internals.WrappedStateStore;

/**
 * The accumulated content of open items, kept as append-only chunks under a short (item handle, chunk
 * number) key; the full content is rebuilt only when an item emits. The deltas an item gains between
 * two commits go into one chunk, rewritten as it grows: the store's record cache keeps the rewrites in
 * memory, and when the cache writes the chunk (at the commit, or when it evicts it) the chunk is closed,
 * so the changelog carries one record per item and commit instead of one per delta (profiled: the
 * per-delta store write and its changelog record were the largest cost of a delta). A chunk also
 * closes at {@value #MAX_CHUNK_CHARS} chars, so a burst never rewrites a long one. Without a record
 * cache every chunk holds one delta.
 *
 * <p>The cache tells what it wrote through its flush listener, which Kafka Streams exposes on the
 * store only through its internal {@code WrappedStateStore}; all Kafka artifacts are pinned to one
 * version, and the topology tests (TopologyTestDriver commits after every record) check the result.
 *
 * <p>Each item's content, chunk count and code-point total are cached in memory, and, once an item's
 * {@link #tail} has been read, the text added after it, so the next tail needs no read. An emit reads
 * the content from that copy (profiled: a range scan over the record cache and RocksDB per emit was a
 * visible part of emitting); the store stays the truth, and the copy costs what the open items hold.
 * The cache is derived from the store and rebuilt by a range scan on first use after a restart, a
 * restore or a rebalance.
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
    /** Whether the store has a record cache that reports its writes, so chunks can stay open. */
    private final boolean coalescing;

    @SuppressWarnings("unchecked")
    ItemBuffer(KeyValueStore<Bytes, byte[]> chunks) {
        this.chunks = chunks;
        this.coalescing = chunks instanceof WrappedStateStore<?, ?, ?> wrapped
                && ((WrappedStateStore<?, Bytes, byte[]>) wrapped).setFlushListener(written -> chunkWritten(written.key()), false);
    }

    void append(long handle, String delta) {
        if (delta.isEmpty()) {
            return;
        }
        Stats s = stats(handle);
        if (!s.open || s.lastChunkLength() + delta.length() > MAX_CHUNK_CHARS) {
            s.startChunk();
        }
        s.add(delta);
        chunks.put(chunkKey(handle, s.chunks - 1),
                encode(s.text.substring(s.lastChunkFrom), s.lastSurrogateAt >= s.lastChunkFrom));
        s.open = coalescing;
        if (s.unsent != null) {
            s.unsent.append(delta);
        }
    }

    /** The record cache wrote this chunk to the store and its changelog: it takes no more deltas. */
    private void chunkWritten(Bytes key) {
        byte[] bytes = key.get();
        int length = bytes[0];
        long handle = 0;
        for (int i = 1; i <= length; i++) {
            handle = handle << 8 | (bytes[i] & 0xFF);
        }
        Stats s = stats.get(handle);
        if (s != null) {
            s.open = false;
        }
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
     * always whole code points. Reads only the chunks from {@code from} on.
     */
    Tail tail(long handle, Cursor from) {
        Stats s = stats(handle);
        StringBuilder text;
        Cursor end;
        if (from.equals(s.unsentFrom)) {
            text = s.unsent;
            end = text.isEmpty() ? from : new Cursor(s.chunks - 1, s.lastChunkLength());
        } else {
            text = new StringBuilder();
            int lastChunk = from.chunk();
            int lastChunkLength = from.chars();
            try (KeyValueIterator<Bytes, byte[]> it = chunks.range(chunkKey(handle, from.chunk()), chunkKey(handle, Integer.MAX_VALUE))) {
                for (int chunk = from.chunk(); it.hasNext(); chunk++) {
                    String value = decode(it.next().value);
                    text.append(value, chunk == from.chunk() ? Math.min(from.chars(), value.length()) : 0, value.length());
                    lastChunk = chunk;
                    lastChunkLength = value.length();
                }
            }
            end = new Cursor(lastChunk, lastChunkLength);
        }
        s.unsent = new StringBuilder();
        if (!text.isEmpty() && Character.isHighSurrogate(text.charAt(text.length() - 1))) {
            s.unsent.append(text.charAt(text.length() - 1));
            text.setLength(text.length() - 1);
            end = new Cursor(end.chunk(), end.chars() - 1);
        }
        s.unsentFrom = end;
        return new Tail(text.toString(), end);
    }

    long codePoints(long handle) {
        return stats(handle).codePoints;
    }

    void drop(long handle) {
        Stats s = stats.remove(handle);
        int count = s != null ? s.chunks : countChunks(handle);
        for (int i = 0; i < count; i++) {
            // A null put deletes without delete()'s read of the old value: one RocksDB get per chunk saved.
            chunks.put(chunkKey(handle, i), null);
        }
    }

    /** Forgets the cache; called when the task (re)initialises, since the store may have been restored. */
    void forgetCache() {
        stats.clear();
    }

    private Stats stats(long handle) {
        return stats.computeIfAbsent(handle, this::rebuild);
    }

    private Stats rebuild(long handle) {
        Stats s = new Stats();
        try (KeyValueIterator<Bytes, byte[]> it = chunks.range(chunkKey(handle, 0), chunkKey(handle, Integer.MAX_VALUE))) {
            it.forEachRemaining(chunk -> {
                s.startChunk();
                s.add(decode(chunk.value));
            });
        }
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
        return Bytes.wrap(java.util.Arrays.copyOf(key.array(), key.position()));
    }

    private static void putOrdered(ByteBuffer key, long value) {
        int length = (Long.SIZE - Long.numberOfLeadingZeros(value) + 7) / 8;
        key.put((byte) length);
        for (int shift = (length - 1) * 8; shift >= 0; shift -= 8) {
            key.put((byte) (value >>> shift));
        }
    }

    /**
     * The chunk as stored. Only a chunk with a surrogate can hold a lone one: the open chunk is encoded
     * again with every delta, and scanning all of it per delta was a visible part of appending.
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

    /** Content, chunk count and code points of one item; a surrogate pair split across two deltas counts once. */
    private static final class Stats {
        int chunks;
        /** Every chunk's text, in order: the item's content. */
        final StringBuilder text = new StringBuilder();
        /** Where the last chunk starts in {@link #text}. */
        int lastChunkFrom;
        /** Whether the last chunk still takes deltas: false once the record cache wrote it. */
        boolean open;
        long codePoints;
        boolean endsWithHighSurrogate;
        /** Where in {@link #text} the last surrogate (half of an emoji, say) is, or -1 when it has none. */
        int lastSurrogateAt = -1;
        /** Where the last tail read ended, and the text added since; null until a tail is read. */
        Cursor unsentFrom;
        StringBuilder unsent;

        void startChunk() {
            chunks++;
            lastChunkFrom = text.length();
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
