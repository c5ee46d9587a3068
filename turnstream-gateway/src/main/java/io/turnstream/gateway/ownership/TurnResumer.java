package io.turnstream.gateway.ownership;

import io.turnstream.gateway.loop.TurnProgress;
import io.turnstream.gateway.loop.TurnRegistry;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.ToolResult;
import io.turnstream.model.Topics;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.GrouplessConsumer;
import io.turnstream.runtime.TopicReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads what Kafka holds of a turn another gateway was running: its raw events (key run id, on the
 * run's partition of {@code llm.raw-events}) and the results of its tool calls (key turn id, on
 * {@code llm.tool-results}), each from shortly before the turn was accepted. Reads go through a
 * {@link GrouplessConsumer}, read_committed, up to the high watermark seen when they start, so every
 * transaction open at that moment (a dead owner's, once fenced) has resolved: what was committed is all
 * there, what was aborted is never seen. A record that cannot be read is skipped with a warning; a
 * transaction still open after {@link #READ_LIMIT} leaves the read with what is committed.
 */
public final class TurnResumer implements TurnHistory, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(TurnResumer.class);
    private static final String CLIENT_ID = "turnstream-gateway-resume";
    /** Records are stamped by the clocks of different machines. */
    private static final Duration CLOCK_SKEW = Duration.ofMinutes(1);
    /** Transactions left open by a dead owner resolve when fenced or at their timeout. */
    private static final Duration READ_LIMIT = Duration.ofSeconds(60);
    private static final Duration TOPIC_WAIT = Duration.ofSeconds(30);

    private final Properties kafkaProperties;
    private final Topics topics;
    private final WireFormat format;
    private final Admin admin;

    public TurnResumer(Properties kafkaProperties, Topics topics, WireFormat format) {
        this.kafkaProperties = kafkaProperties;
        this.topics = topics;
        this.format = format;
        this.admin = Admin.create(kafkaProperties);
    }

    @Override
    public TurnProgress progress(TurnRequestRecord request, List<TurnRequestRecord> steps, String requestedModel,
                          TurnRegistry.ActiveTurn active) {
        try (GrouplessConsumer reads = new GrouplessConsumer(CLIENT_ID, kafkaProperties)) {
            return progress(topics, format, request, steps, requestedModel, active,
                    (topic, key, since, handler) -> readKey(reads, topic, key, since, handler));
        }
    }

    /**
     * A thread's records on {@code llm.turn-requests} (its requests and their steps, key {@code threadKey}) written
     * since a moment, in order, up to the end of the partition; each with its offset.
     */
    public List<ConsumerRecord<String, byte[]>> threadRecords(String threadKey, Instant since) {
        List<ConsumerRecord<String, byte[]>> records = new ArrayList<>();
        try (GrouplessConsumer reads = new GrouplessConsumer(CLIENT_ID, kafkaProperties)) {
            readKey(reads, topics.turnRequests(), threadKey, since, records::add);
        }
        return records;
    }

    /** One key's records of a topic, written since a moment. */
    interface KeyReads {
        void read(String topic, String key, Instant since, GrouplessConsumer.RecordHandler handler);
    }

    /**
     * What {@link #progress} reads and decides, on any reads: the run's raw events, folded; and, only when
     * the turn waits for tool results and has not ended, the turn's tool results, handed to {@code active}.
     * Both are read from {@link #CLOCK_SKEW} before the turn was accepted.
     */
    static TurnProgress progress(Topics topics, WireFormat format, TurnRequestRecord request,
                                 List<TurnRequestRecord> steps, String requestedModel, TurnRegistry.ActiveTurn active,
                                 KeyReads reads) {
        Instant since = Instant.ofEpochMilli(Math.max(0, request.requestedAt() - CLOCK_SKEW.toMillis()));
        List<StreamPayload> events = new ArrayList<>();
        reads.read(topics.rawEvents(), request.runId(), since,
                record -> events.add(format.read(record.topic(), record.value(), StreamEvent.class).payload()));
        TurnProgress progress = TurnProgress.of(request.runId(), requestedModel, steps, events);
        if (progress.awaiting() != null && progress.endedStatus() == null) {
            reads.read(topics.toolResults(), request.turnId(), since, record -> {
                ToolResult result = format.read(record.topic(), record.value(), ToolResult.class);
                if (result.callId() != null) {
                    active.result(result.callId()).complete(result);
                }
            });
        }
        return progress;
    }

    /** The records of {@code key} written since a moment, on the partition the key is written to. */
    private void readKey(GrouplessConsumer reads, String topic, String key, Instant since,
                         GrouplessConsumer.RecordHandler handler) {
        int partitions = reads.partitionsOf(List.of(topic), TOPIC_WAIT).size();
        TopicPartition partition = new TopicPartition(topic,
                Utils.toPositive(Utils.murmur2(key.getBytes(StandardCharsets.UTF_8))) % partitions);
        readToHighWatermark(reads, reads.offsets(List.of(partition), TopicReader.Start.since(since)), record -> {
            if (key.equals(record.key())) {
                handler.handle(record);
            }
        });
    }

    /** Every record of a partition from {@code from} to its end. */
    List<ConsumerRecord<String, byte[]>> readToEnd(TopicPartition partition, long from) {
        List<ConsumerRecord<String, byte[]>> records = new ArrayList<>();
        try (GrouplessConsumer reads = new GrouplessConsumer(CLIENT_ID, kafkaProperties)) {
            readToHighWatermark(reads, Map.of(partition, from), records::add);
        }
        return records;
    }

    private void readToHighWatermark(GrouplessConsumer reads, Map<TopicPartition, Long> from,
                                     GrouplessConsumer.RecordHandler handler) {
        try {
            reads.read(from, highWatermarks(from.keySet()), READ_LIMIT, handler);
        } catch (TimeoutException stillOpen) {
            LOG.warn("{}; going on with what is committed", stillOpen.getMessage());
        }
    }

    private Map<TopicPartition, Long> highWatermarks(Set<TopicPartition> partitions) {
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        partitions.forEach(partition -> latest.put(partition, OffsetSpec.latest()));
        try {
            Map<TopicPartition, Long> ends = new HashMap<>();
            admin.listOffsets(latest, new ListOffsetsOptions(IsolationLevel.READ_UNCOMMITTED)).all().get()
                    .forEach((partition, info) -> ends.put(partition, info.offset()));
            return ends;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KafkaException("interrupted while reading the end of " + partitions, e);
        } catch (ExecutionException e) {
            throw new KafkaException("cannot read the end of " + partitions, e.getCause());
        }
    }

    @Override
    public void close() {
        admin.close(Duration.ofSeconds(5));
    }
}
