package io.turnstream.testkit;

import io.turnstream.model.DeadLetterHeaders;
import io.turnstream.model.ItemAppend;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.ToolCall;
import io.turnstream.model.UpsertEnvelope;
import io.turnstream.runtime.Settings;
import io.turnstream.schema.ContractSerde;
import io.turnstream.topology.TopologyConfig;
import io.turnstream.topology.UpsertTopology;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;

/**
 * Turnstream's topology in a Kafka Streams {@link TopologyTestDriver}, for applications that test
 * their own code against what Turnstream emits: send {@link StreamEvent}s as a gateway would, let
 * wall-clock time pass (batch timeouts, idle turns), and read upserts, appends and tool calls as
 * typed records. No broker, no threads: everything happens in the calling thread.
 *
 * <pre>{@code
 * try (TurnstreamTestDriver driver = TurnstreamTestDriver.create()) {
 *     driver.send(TurnEvents.turn("turn-1").message("msg-1", "Hello", ", world").completed());
 *     TurnAssert.assertThat(driver.turn("turn-1")).isCompleted().hasMessage("msg-1", "Hello, world");
 * }
 * }</pre>
 *
 * Outputs accumulate: each read returns everything emitted since the driver started.
 */
public final class TurnstreamTestDriver implements AutoCloseable {

    /** A record the topology dead-lettered: its key, its original value and the reason header. */
    public record DeadLetter(String key, String value, String reason) {
    }

    private static final Instant START = Instant.ofEpochMilli(1_000_000);

    private final TopologyConfig config;
    private final TopologyTestDriver driver;
    private final TestInputTopic<String, StreamEvent> rawEvents;
    private final TestInputTopic<String, byte[]> rawBytes;
    private final TestOutputTopic<String, UpsertEnvelope> upsertTopic;
    private final TestOutputTopic<String, ItemAppend> appendTopic;
    private final TestOutputTopic<String, ToolCall> toolCallTopic;
    private final TestOutputTopic<String, byte[]> deadLetterTopic;
    private final List<UpsertEnvelope> upserts = new ArrayList<>();
    private final List<ItemAppend> appends = new ArrayList<>();
    private final List<ToolCall> toolCalls = new ArrayList<>();
    private final List<DeadLetter> deadLetters = new ArrayList<>();

    private TurnstreamTestDriver(TopologyConfig config) {
        this.config = config;
        Properties props = config.streamsProperties();
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "test-driver:9092");
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "turnstream-test-driver");
        try {
            props.put(StreamsConfig.STATE_DIR_CONFIG, Files.createTempDirectory("turnstream-test-driver").toString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        driver = new TopologyTestDriver(UpsertTopology.build(config), props, START);
        StringSerializer keys = new StringSerializer();
        StringDeserializer keysIn = new StringDeserializer();
        rawEvents = driver.createInputTopic(config.topics().rawEvents(), keys, serde(StreamEvent.class));
        rawBytes = driver.createInputTopic(config.topics().rawEvents(), keys, new ByteArraySerializer());
        upsertTopic = driver.createOutputTopic(config.topics().upserts(), keysIn, serde(UpsertEnvelope.class));
        appendTopic = driver.createOutputTopic(config.topics().itemAppends(), keysIn, serde(ItemAppend.class));
        toolCallTopic = driver.createOutputTopic(config.topics().toolCalls(), keysIn, serde(ToolCall.class));
        deadLetterTopic = driver.createOutputTopic(config.topics().deadLetters(), keysIn, new ByteArrayDeserializer());
    }

    /** The topology with its defaults (JSON, the seed gradient, contract topic names). */
    public static TurnstreamTestDriver create() {
        return new TurnstreamTestDriver(TopologyConfig.defaults());
    }

    /** The topology configured as in a {@code --config} file: {@code turnstream.batch.gradient}, topic names, ... */
    public static TurnstreamTestDriver create(Properties settings) {
        return new TurnstreamTestDriver(TopologyConfig.from(Settings.of(settings)));
    }

    public TopologyConfig config() {
        return config;
    }

    /** Sends events to {@code llm.raw-events}, each keyed by its run id. */
    public void send(List<StreamEvent> events) {
        events.forEach(event -> rawEvents.pipeInput(event.runId(), event));
    }

    public void send(StreamEvent... events) {
        send(List.of(events));
    }

    /** Sends any bytes, e.g. to see how the topology treats bad input (it dead-letters it). */
    public void sendRaw(String key, String value) {
        rawBytes.pipeInput(key, value == null ? null : value.getBytes(StandardCharsets.UTF_8));
    }

    /** Lets wall-clock time pass: batch timeouts, idle turns and the append tick fire as in production. */
    public void advanceWallClockTime(Duration duration) {
        driver.advanceWallClockTime(duration);
    }

    /** Every envelope on {@code llm.upserts} so far. */
    public List<UpsertEnvelope> upserts() {
        drain();
        return List.copyOf(upserts);
    }

    /** Every record on {@code llm.item-appends} so far. */
    public List<ItemAppend> appends() {
        drain();
        return List.copyOf(appends);
    }

    /** Every record on {@code llm.tool-calls} so far. */
    public List<ToolCall> toolCalls() {
        drain();
        return List.copyOf(toolCalls);
    }

    /** Every record on {@code llm.raw-events.dlq} so far. */
    public List<DeadLetter> deadLetters() {
        drain();
        return List.copyOf(deadLetters);
    }

    /** The turn as a client sees it from everything emitted so far. */
    public TurnView turn(String turnId) {
        drain();
        return new TurnView(turnId, upserts, appends);
    }

    private void drain() {
        upserts.addAll(upsertTopic.readValuesToList());
        appends.addAll(appendTopic.readValuesToList());
        toolCalls.addAll(toolCallTopic.readValuesToList());
        deadLetterTopic.readRecordsToList().forEach(record -> {
            Header reason = record.headers().lastHeader(DeadLetterHeaders.REASON);
            deadLetters.add(new DeadLetter(record.key(),
                    record.value() == null ? null : new String(record.value(), StandardCharsets.UTF_8),
                    reason == null ? null : new String(reason.value(), StandardCharsets.UTF_8)));
        });
    }

    /** Records in the format the topology is configured with, as its consumers would read them. */
    private <T> ContractSerde<T> serde(Class<T> type) {
        return ContractSerde.of(type, config.wireFormat());
    }

    @Override
    public void close() {
        driver.close();
    }
}
