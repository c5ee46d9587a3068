package io.turnstream.topology;

import io.turnstream.model.DeadLetterHeaders;
import io.turnstream.model.ItemAppend;
import io.turnstream.model.ChangeType;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.ToolCall;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiPayload;
import io.turnstream.model.UpsertEnvelope;
import io.turnstream.model.WireFormat;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.stream.Collectors;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.test.TestRecord;

/**
 * The topology in a TopologyTestDriver with helpers named after what a test does: send an event,
 * let wall-clock time pass, read what came out on each topic. Events are written and outputs read in
 * the topology's wire format by a client of their own (for Avro: a registry client other than the
 * topology's, as a gateway and a UI would have).
 */
final class TopologyHarness implements AutoCloseable {

    /** A dead-lettered record: its key, its original bytes and the reason header. */
    record DeadLetter(String key, byte[] bytes, String reason) {

        /** The original value as UTF-8 text (JSON input). */
        String value() {
            return new String(bytes, StandardCharsets.UTF_8);
        }
    }

    final TopologyConfig config;
    /** How the test's own producer and readers encode records: the topology's format, another client. */
    private final WireFormat clientFormat;
    private final TopologyTestDriver driver;
    private final TestInputTopic<String, byte[]> rawEvents;
    private final TestOutputTopic<String, byte[]> upserts;
    private final TestOutputTopic<String, byte[]> itemState;
    private final TestOutputTopic<String, byte[]> toolCalls;
    private final TestOutputTopic<String, byte[]> deadLetters;
    private final TestOutputTopic<String, byte[]> itemAppends;
    private final Map<String, UpsertEnvelope> latestItemState = new java.util.LinkedHashMap<>();

    TopologyHarness() {
        this(TopologyConfig.defaults());
    }

    TopologyHarness(TopologyConfig config) {
        this(config, config.wireFormat());
    }

    /** A topology whose input is written, and output read, with {@code clientFormat}. */
    TopologyHarness(TopologyConfig config, WireFormat clientFormat) {
        this.config = config;
        this.clientFormat = clientFormat;
        Properties props = config.streamsProperties();
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "harness");
        try {
            props.put(StreamsConfig.STATE_DIR_CONFIG, Files.createTempDirectory("turnstream-ttd").toString());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        driver = new TopologyTestDriver(UpsertTopology.build(config), props, Instant.ofEpochMilli(1_000_000));
        rawEvents = driver.createInputTopic(config.topics().rawEvents(), new StringSerializer(), new ByteArraySerializer());
        upserts = output(config.topics().upserts());
        itemState = output(config.topics().itemState());
        toolCalls = output(config.topics().toolCalls());
        deadLetters = output(config.topics().deadLetters());
        itemAppends = output(config.topics().itemAppends());
    }

    private TestOutputTopic<String, byte[]> output(String topic) {
        return driver.createOutputTopic(topic, new StringDeserializer(), new ByteArrayDeserializer());
    }

    void send(String runId, StreamPayload payload) {
        send(StreamEvent.of(UUID.randomUUID().toString(), 0, runId, payload));
    }

    /** A whole event, keyed by its run id (for fields {@link StreamEvent#of} leaves out, such as a trace context). */
    void send(StreamEvent event) {
        sendRaw(event.runId(), clientFormat.write(config.topics().rawEvents(), event));
    }

    /** As {@link #send}, with record headers (a tenant claim, a trace context). */
    void send(String runId, StreamPayload payload, Headers headers) {
        StreamEvent event = StreamEvent.of(UUID.randomUUID().toString(), 0, runId, payload);
        rawEvents.pipeInput(new TestRecord<>(runId, clientFormat.write(config.topics().rawEvents(), event), headers));
    }

    void sendRaw(String key, String value) {
        sendRaw(key, value.getBytes(StandardCharsets.UTF_8));
    }

    void sendRaw(String key, byte[] value) {
        rawEvents.pipeInput(key, value);
    }

    void advanceWallClock(Duration duration) {
        driver.advanceWallClockTime(duration);
    }

    /** Every envelope emitted on llm.upserts since the last call. */
    List<UpsertEnvelope> upserts() {
        return upsertRecords().stream().map(r -> decode(config.topics().upserts(), r.value(), UpsertEnvelope.class)).toList();
    }

    /** The records emitted on llm.upserts since the last call, undecoded (with their headers). */
    List<TestRecord<String, byte[]>> upsertRecords() {
        return upserts.readRecordsToList();
    }

    /** A record of {@code topic} in the client's format; the test fails on one it cannot read. */
    <T> T decode(String topic, byte[] bytes, Class<T> type) {
        try {
            return clientFormat.read(topic, bytes, type);
        } catch (java.io.IOException e) {
            throw new AssertionError("not a " + type.getSimpleName() + " on " + topic + ": " + e.getMessage(), e);
        }
    }

    /** The payloads emitted since the last call, one line each, in the form {@link #describe} gives. */
    List<String> emitted() {
        return upserts().stream().map(e -> describe(e.payload())).toList();
    }

    /** Every record emitted on llm.item-appends since the last call. */
    List<ItemAppend> appends() {
        return itemAppends.readRecordsToList().stream().map(r -> {
            ItemAppend append = decode(config.topics().itemAppends(), r.value(), ItemAppend.class);
            if (!append.turnId().equals(r.key())) {
                throw new AssertionError("append keyed " + r.key() + " for turn " + append.turnId());
            }
            return append;
        }).toList();
    }

    /**
     * The latest envelope per key on the compacted llm.item-state topic, as a consumer would see
     * after compaction: a tombstone removes its key.
     */
    Map<String, UpsertEnvelope> itemState() {
        for (TestRecord<String, byte[]> record : itemState.readRecordsToList()) {
            if (record.value() == null) {
                latestItemState.remove(record.key());
            } else {
                latestItemState.put(record.key(), decode(config.topics().itemState(), record.value(), UpsertEnvelope.class));
            }
        }
        return latestItemState;
    }

    List<ToolCall> toolCalls() {
        return toolCalls.readValuesToList().stream()
                .map(v -> decode(config.topics().toolCalls(), v, ToolCall.class)).toList();
    }

    /** The tool calls emitted since the last call, as records (with their headers). */
    List<TestRecord<String, byte[]>> toolCallRecords() {
        return toolCalls.readRecordsToList();
    }

    List<DeadLetter> deadLetters() {
        return deadLetters.readRecordsToList().stream().map(r -> new DeadLetter(r.key(), r.value(),
                new String(r.headers().lastHeader(DeadLetterHeaders.REASON).value(), StandardCharsets.UTF_8))).toList();
    }

    double deadLetterTotal() {
        return driver.metrics().entrySet().stream()
                .filter(e -> e.getKey().name().equals("dead-letter-total"))
                .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue())
                .sum();
    }

    /** The processor's key-value store of that name, as the task holds it: its outermost layer. */
    KeyValueStore<?, ?> store(String name) {
        return driver.getKeyValueStore(name);
    }

    /** Bytes (keys and values) written to each changelog topic so far. */
    Map<String, Long> changelogBytes() {
        return driver.producedTopicNames().stream()
                .filter(topic -> topic.endsWith("-changelog"))
                .collect(Collectors.toMap(topic -> topic, this::bytesOn));
    }

    private long bytesOn(String topic) {
        long total = 0;
        for (TestRecord<byte[], byte[]> record : driver.createOutputTopic(topic, new ByteArrayDeserializer(),
                new ByteArrayDeserializer()).readRecordsToList()) {
            total += (record.key() == null ? 0 : record.key().length) + (record.value() == null ? 0 : record.value().length);
        }
        return total;
    }

    /**
     * One readable line per payload: {@code turn_started}, {@code turn_completed complete},
     * {@code message created v1 origin=agent "Hello"}, {@code tool_call completed v1 read_file {...}}.
     */
    static String describe(UiPayload payload) {
        if (payload instanceof UITurnEvent event) {
            StringBuilder line = new StringBuilder(event.type().wire());
            if (event.status() != null) {
                line.append(' ').append(event.status());
            }
            if (event.error() != null) {
                line.append(' ').append(event.error().code()).append(": ").append(event.error().message());
            }
            return line.toString();
        }
        UIUpsert upsert = (UIUpsert) payload;
        if (upsert.changeType() == ChangeType.WITHDRAWN) {
            return upsert.itemType().wire() + " withdrawn v" + upsert.version()
                    + (upsert.callId() != null ? " call=" + upsert.callId() : "");
        }
        StringBuilder line = new StringBuilder(upsert.itemType().wire()).append(' ').append(upsert.changeType())
                .append(" v").append(upsert.version());
        if (upsert.origin() != null) {
            line.append(" origin=").append(upsert.origin());
        }
        if (upsert.providerId() != null) {
            line.append(" provider=").append(upsert.providerId());
        }
        switch (upsert.itemType()) {
            case TOOL_CALL -> line.append(' ').append(upsert.toolName()).append(' ').append(upsert.toolArguments())
                    .append(" call=").append(upsert.callId());
            case TOOL_OUTPUT -> line.append(" call=").append(upsert.callId()).append(" success=")
                    .append(upsert.success()).append(' ').append(upsert.toolOutput());
            case ERROR -> line.append(' ').append(upsert.errorCode()).append(": ").append(upsert.errorMessage());
            default -> line.append(" \"").append(upsert.content()).append('"');
        }
        return line.toString();
    }

    @Override
    public void close() {
        driver.close();
    }
}
