package io.turnstream.topology;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

class ItemBufferTest {

    @Test
    void itemsWhoseHandlesCrossAByteLengthBoundaryKeepTheirOwnContentInOrder() {
        KeyValueStore<Bytes, byte[]> store = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("chunks"),
                Serdes.Bytes(), Serdes.ByteArray()).withLoggingDisabled().build();
        store.init(new MockProcessorContext<>().getStateStoreContext(), store);
        ItemBuffer buffer = new ItemBuffer(store);
        long[] handles = {0, 1, 255, 256, 65_535, 65_536, Long.MAX_VALUE};
        for (int chunk = 0; chunk < 300; chunk++) {
            for (long handle : handles) {
                buffer.append(handle, handle + ":" + chunk + ";");
            }
        }

        Map<Long, String> fromMemory = new HashMap<>();
        for (long handle : handles) {
            fromMemory.put(handle, buffer.content(handle));
        }
        buffer.forgetCache();
        for (long handle : handles) {
            StringBuilder expected = new StringBuilder();
            for (int chunk = 0; chunk < 300; chunk++) {
                expected.append(handle).append(':').append(chunk).append(';');
            }
            assertThat(buffer.content(handle)).as("read from the store").isEqualTo(expected.toString());
            assertThat(fromMemory.get(handle)).as("read from memory").isEqualTo(expected.toString());
            assertThat(buffer.codePoints(handle)).as("rebuilt from the store").isEqualTo(expected.length());
        }

        buffer.drop(256);
        assertThat(buffer.content(256)).isEmpty();
        assertThat(buffer.content(255)).startsWith("255:0;255:1;");
        assertThat(buffer.content(65_535)).startsWith("65535:0;");
    }

    @Test
    void tailsReadFromMemoryEqualTailsReadFromTheStoreAndNeverSplitAnEmoji() {
        KeyValueStore<Bytes, byte[]> store = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("chunks"),
                Serdes.Bytes(), Serdes.ByteArray()).withLoggingDisabled().build();
        store.init(new MockProcessorContext<>().getStateStoreContext(), store);
        ItemBuffer buffer = new ItemBuffer(store);
        String[] pieces = {"ab", "c\uD83D", "\uDE00d", "\uD83D", "\uDE80", "", "xyz", "\uD83D"};
        ItemBuffer.Cursor cursor = ItemBuffer.Cursor.START;
        StringBuilder sent = new StringBuilder();
        for (String piece : pieces) {
            buffer.append(7, piece);
            ItemBuffer.Tail fromStore = new ItemBuffer(store).tail(7, cursor);
            ItemBuffer.Tail fromMemory = buffer.tail(7, cursor);

            assertThat(fromMemory).isEqualTo(fromStore);
            assertThat(fromMemory.text()).doesNotEndWith("\uD83D");
            sent.append(fromMemory.text());
            cursor = fromMemory.end();
        }
        assertThat(sent.toString()).isEqualTo("abc😀d🚀xyz");
        assertThat(buffer.content(7)).isEqualTo("abc😀d🚀xyz\uD83D");
    }

    @Test
    void openChunksReachTheStoreOnlyBeforeACommitOneChunkPerItemAndCommit() {
        KeyValueStore<Bytes, byte[]> store = BeforeCommitStore.builder(Stores.keyValueStoreBuilder(
                Stores.inMemoryKeyValueStore("chunks"), Serdes.Bytes(), Serdes.ByteArray()).withLoggingDisabled()).build();
        store.init(new MockProcessorContext<>().getStateStoreContext(), store);
        ItemBuffer buffer = new ItemBuffer(store);
        for (String delta : new String[] {"Hel", "lo", " wor", "ld\uD83D"}) {
            buffer.append(1, delta);
            buffer.append(2, delta.toUpperCase());
            buffer.append(3, delta);
        }
        assertThat(entries(store)).as("nothing written before the commit").isZero();
        buffer.drop(3);

        ((BeforeCommitStore<Bytes, byte[]>) store).flushCache();
        assertThat(entries(store)).as("one chunk per open item; the dropped one never written").isEqualTo(2);
        assertThat(fromStore(store).content(1)).isEqualTo("Hello world\uD83D");

        buffer.append(1, "\uDE00!");
        buffer.append(2, "ab");
        buffer.append(2, "x".repeat(ItemBuffer.MAX_CHUNK_CHARS));
        assertThat(entries(store)).as("a chunk that would pass the limit closes, and waits for the commit too").isEqualTo(2);
        ((BeforeCommitStore<Bytes, byte[]>) store).flushCache();
        assertThat(entries(store)).as("both of item 2's new chunks written").isEqualTo(5);

        ItemBuffer restored = fromStore(store);
        for (long handle : new long[] {1, 2}) {
            assertThat(restored.content(handle)).isEqualTo(buffer.content(handle));
            assertThat(restored.codePoints(handle)).isEqualTo(buffer.codePoints(handle));
            for (ItemBuffer.Cursor from : List.of(ItemBuffer.Cursor.START, new ItemBuffer.Cursor(0, 3),
                    new ItemBuffer.Cursor(1, 1), new ItemBuffer.Cursor(2, 0))) {
                assertThat(restored.tail(handle, from)).as("tail of %d from %s", handle, from).isEqualTo(buffer.tail(handle, from));
            }
        }
        assertThat(buffer.content(1)).isEqualTo("Hello world\uD83D\uDE00!");
        assertThat(buffer.tail(1, new ItemBuffer.Cursor(0, 6))).isEqualTo(new ItemBuffer.Tail("world😀!", new ItemBuffer.Cursor(1, 2)));

        buffer.drop(1);
        buffer.drop(2);
        ((BeforeCommitStore<Bytes, byte[]>) store).flushCache();
        assertThat(entries(store)).as("every chunk deleted").isZero();
    }

    @Test
    void anItemThatFinishesBetweenTwoCommitsWritesNothingHoweverManyChunksItFills() {
        KeyValueStore<Bytes, byte[]> store = BeforeCommitStore.builder(Stores.keyValueStoreBuilder(
                Stores.inMemoryKeyValueStore("chunks"), Serdes.Bytes(), Serdes.ByteArray()).withLoggingDisabled()).build();
        store.init(new MockProcessorContext<>().getStateStoreContext(), store);
        ItemBuffer buffer = new ItemBuffer(store);
        buffer.append(1, "kept");
        ((BeforeCommitStore<Bytes, byte[]>) store).flushCache();
        String delta = "y".repeat(100);
        for (int i = 0; i < 3 * ItemBuffer.MAX_CHUNK_CHARS / delta.length(); i++) {
            buffer.append(1, delta);
            buffer.append(2, delta);
        }
        assertThat(entries(store)).as("full chunks wait for the commit: the store has no record cache to take them").isEqualTo(1);
        assertThat(buffer.tail(2, ItemBuffer.Cursor.START).end().chunk()).as("item 2 filled chunks").isGreaterThanOrEqualTo(2);

        buffer.drop(2);
        ((BeforeCommitStore<Bytes, byte[]>) store).flushCache();
        assertThat(fromStore(store).content(2)).as("the finished item left nothing").isEmpty();
        assertThat(fromStore(store).content(1)).isEqualTo("kept" + delta.repeat(3 * ItemBuffer.MAX_CHUNK_CHARS / delta.length()));
        assertThat(entries(store)).as("item 1's chunks, each of them bounded").isEqualTo(1 + buffer.tail(1, ItemBuffer.Cursor.START).end().chunk());
    }

    /** A buffer reading what the store holds (a second one on the store itself would take its hook). */
    private static ItemBuffer fromStore(KeyValueStore<Bytes, byte[]> store) {
        return new ItemBuffer(((BeforeCommitStore<Bytes, byte[]>) store).wrapped());
    }

    private static int entries(KeyValueStore<Bytes, byte[]> store) {
        int count = 0;
        try (var it = store.all()) {
            for (; it.hasNext(); it.next()) {
                count++;
            }
        }
        return count;
    }
}
