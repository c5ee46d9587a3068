package io.turnstream.topology;

import static org.assertj.core.api.Assertions.assertThat;

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

        buffer.forgetCache();
        for (long handle : handles) {
            StringBuilder expected = new StringBuilder();
            for (int chunk = 0; chunk < 300; chunk++) {
                expected.append(handle).append(':').append(chunk).append(';');
            }
            assertThat(buffer.content(handle)).isEqualTo(expected.toString());
            assertThat(buffer.codePoints(handle)).as("rebuilt from the store").isEqualTo(expected.length());
        }

        buffer.drop(256);
        assertThat(buffer.content(256)).isEmpty();
        assertThat(buffer.content(255)).startsWith("255:0;255:1;");
        assertThat(buffer.content(65_535)).startsWith("65535:0;");
    }
}
