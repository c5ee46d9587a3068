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
 * two commits go into one chunk, kept in memory while it is open and written to the store once, just
 * before the commit ({@link BeforeCommitStore} runs {@link #writeOpenChunks}), so the store, its record
 * cache and its changelog see one write per item and commit instead of one per delta (profiled: the
 * per-delta store write was the largest cost of a delta, and its rewrite in the record cache still
 * 14% of the stream thread). A written chunk is closed: the next delta starts a new one. What is
 * written before a commit is exactly the content of the input up to that commit; a crash before it
 * aborts the transaction, and the input is read again. A chunk also closes, and is written at once,
 * at {@value #MAX_CHUNK_CHARS} chars, so a burst never keeps a long one. On a store without the hook
 * (unit tests) every delta is written at once, as a chunk of its own.
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
    /** Items that opened a chunk since the last commit (some may have written or dropped it since). */
    private final List<Stats> opened = new ArrayList<>();

    ItemBuffer(KeyValueStore<Bytes, byte[]> chunks) {
        this.chunks = chunks;
        BeforeCommitStore<?, ?> hook = BeforeCommitStore.under(chunks);
        this.deferring = hook != null;
        if (hook != null) {
            hook.beforeCommit(this::writeOpenChunks);
        }
    }

    void append(long handle, String delta) {
        if (delta.isEmpty()) {
            return;
        }
        Stats s = stats(handle);
        if (s.open && s.lastChunkLength() + delta.length() > MAX_CHUNK_CHARS) {
            writeOpenChunk(s);
        }
        if (!s.open) {
            s.startChunk();
            s.open = true;
            if (deferring) {
                opened.add(s);
            }
        }
        s.add(delta);
        if (!deferring) {
            writeOpenChunk(s);
        }
    }

    /** Writes every open chunk to the store, closing it; runs just before each commit. */
    void writeOpenChunks() {
        for (Stats s : opened) {
            if (s.open) {
                writeOpenChunk(s);
            }
        }
        opened.clear();
    }

    private void writeOpenChunk(Stats s) {
        chunks.put(chunkKey(s.handle, s.chunks - 1),
                encode(s.text.substring(s.lastChunkFrom), s.lastSurrogateAt >= s.lastChunkFrom));
        s.open = false;
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
        int count = s == null ? countChunks(handle) : s.open ? s.chunks - 1 : s.chunks;
        if (s != null) {
            s.open = false;
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
        /** Whether the last chunk is in memory only and takes deltas: false once it is written. */
        boolean open;
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
