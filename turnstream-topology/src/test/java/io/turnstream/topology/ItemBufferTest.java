package io.turnstream.topology;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
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
}
