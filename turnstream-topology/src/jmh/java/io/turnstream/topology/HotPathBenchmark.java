package io.turnstream.topology;

import io.turnstream.model.ChangeType;
import io.turnstream.model.Origins;
import io.turnstream.model.PayloadType;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiItemType;
import io.turnstream.model.UpsertEnvelope;
import io.turnstream.model.WireFormat;
import java.io.IOException;
import java.nio.file.Files;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The per-delta hot path of the upsert topology without a broker: parsing a raw event, appending
 * the delta to its item's RocksDB chunk store, the gradient check, and serialising an upsert of a
 * 1,000-token item. Lives in the topology's package to reach its package-private parts.
 * Run: {@code ./mvnw -B -q -Pjmh test-compile exec:exec}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class HotPathBenchmark {

    private static final String TOPIC = "llm.raw-events";

    private byte[] deltaEvent;
    private UpsertEnvelope upsert;
    private GradientBatcher batcher;
    private KeyValueStore<Bytes, byte[]> chunks;
    private ItemBuffer buffer;
    private java.nio.file.Path stateDir;
    private long handle;
    private int appended;
    private long tokens;
    private long emittedTokens;
    private int thresholdIndex;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        deltaEvent = WireFormat.JSON.write(TOPIC, StreamEvent.of("run-1:42", 1_700_000_000_000L, "run-1",
                new StreamPayload.ItemDelta("run-1-msg", "the quick br")));
        String content = "0123456789abcdef".repeat(250);
        upsert = new UpsertEnvelope("0b0f4c7e-0000-3000-8000-000000000000", 1_700_000_000_000L, "turn-1", 17,
                PayloadType.ITEM_UPSERT, UIUpsert.text("turn-1", "thread-1", "run-1-msg", UiItemType.MESSAGE,
                ChangeType.UPDATED, 16, content, Origins.AGENT, null));
        batcher = new GradientBatcher(TopologyConfig.SEED_GRADIENT, 0);
        stateDir = Files.createTempDirectory("jmh-state");
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "jmh");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        MockProcessorContext<Object, Object> context = new MockProcessorContext<>(props, new TaskId(0, 0), stateDir.toFile());
        chunks = Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(UpsertTopology.CHUNKS_STORE), Serdes.Bytes(),
                Serdes.ByteArray()).withLoggingDisabled().withCachingDisabled().build();
        chunks.init(context.getStateStoreContext(), chunks);
        buffer = new ItemBuffer(chunks);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        chunks.close();
        Utils.delete(stateDir.toFile());
    }

    @Benchmark
    public StreamEvent parseRawEvent() throws IOException {
        return WireFormat.JSON.read(TOPIC, deltaEvent, StreamEvent.class);
    }

    /** The same bytes through the processor's delta fast path, which skips data binding (see {@link DeltaReader}). */
    @Benchmark
    public StreamEvent readDelta() {
        return DeltaReader.read(deltaEvent);
    }

    /** One delta into the chunk store; a new item every 1,000 deltas, the old one dropped as on completion. */
    @Benchmark
    public long appendDelta() {
        if (++appended == 1_000) {
            buffer.drop(handle++);
            appended = 0;
        }
        return buffer.append(handle, "the quick br");
    }

    /** The check every delta makes, as one item grows 3 tokens a delta to 100,000 tokens (then starts over). */
    @Benchmark
    public int gradientCheck() {
        if (tokens >= 100_000) {
            tokens = 0;
            emittedTokens = 0;
            thresholdIndex = 0;
        }
        tokens += 3;
        if (batcher.reached(tokens, emittedTokens, thresholdIndex)) {
            thresholdIndex = batcher.indexPast(tokens, thresholdIndex);
            emittedTokens = tokens;
        }
        return thresholdIndex;
    }

    @Benchmark
    public byte[] serialiseUpsert() {
        return WireFormat.JSON.write("llm.upserts", upsert);
    }
}
