package io.turnstream.gateway.ownership;

import io.turnstream.gateway.loop.TurnProgress;
import io.turnstream.gateway.loop.TurnRegistry;
import io.turnstream.model.ControlMessage;
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
 * run's partition of {@code llm.raw-events}), a cancel of it (key turn id, on {@code llm.control}) and the
 * results of its tool calls (key turn id, on {@code llm.tool-results}), each from shortly before the turn
 * was accepted. Reads go through a
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
            return progress(request, steps, requestedModel, active, new KafkaTurnLog(reads));
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

    /** What a takeover reads of one turn, each record decoded: from Kafka, or from a simulated log. */
    public interface TurnLog {
        /** The run's events on {@code llm.raw-events} written since {@code since}, in order. */
        List<StreamPayload> rawEvents(String runId, Instant since);

        /** The turn's results on {@code llm.tool-results} written since {@code since}. */
        List<ToolResult> toolResults(String turnId, Instant since);

        /** The turn's commands on {@code llm.control} written since {@code since}. */
        List<ControlMessage> commands(String turnId, Instant since);
    }

    /**
     * What {@link #progress} reads and decides, on any log: the run's raw events, folded; unless the turn
     * has ended, a cancel on {@code llm.control}, which cancels {@code active}; and, only when the turn waits
     * for tool results, the turn's tool results, handed to {@code active}. All are read from
     * {@link #CLOCK_SKEW} before the turn was accepted.
     *
     * <p>The cancel is read here because nothing else carries it to this owner: a cancel the previous owner
     * acted on lives only in that owner's transaction, aborted if its commit failed (a rebalance changed the
     * group's generation), and this gateway's inbox reads {@code llm.control} only from when it started. A
     * cancel accepted before this read is found here; one accepted after it reaches {@code active} through
     * the inbox, which was reading before the turn was registered.
     */
    public static TurnProgress progress(TurnRequestRecord request, List<TurnRequestRecord> steps,
                                        String requestedModel, TurnRegistry.ActiveTurn active, TurnLog log) {
        Instant since = Instant.ofEpochMilli(Math.max(0, request.requestedAt() - CLOCK_SKEW.toMillis()));
        TurnProgress progress = TurnProgress.of(request.runId(), requestedModel, steps,
                log.rawEvents(request.runId(), since));
        if (progress.endedStatus() != null) {
            return progress;
        }
        log.commands(request.turnId(), since).stream()
                .filter(command -> command.type() == ControlMessage.Type.CANCEL).findFirst()
                .ifPresent(cancel -> active.cancel.cancel(cancel.reason()));
        if (progress.awaiting() != null) {
            log.toolResults(request.turnId(), since).stream().filter(result -> result.callId() != null)
                    .forEach(result -> active.result(result.callId()).complete(result));
        }
        return progress;
    }

    /** A turn's records read from Kafka, read_committed, each decoded (one that cannot be is skipped). */
    private final class KafkaTurnLog implements TurnLog {
        private final GrouplessConsumer reads;

        KafkaTurnLog(GrouplessConsumer reads) {
            this.reads = reads;
        }

        @Override
        public List<StreamPayload> rawEvents(String runId, Instant since) {
            return read(topics.rawEvents(), runId, since, StreamEvent.class).stream().map(StreamEvent::payload).toList();
        }

        @Override
        public List<ToolResult> toolResults(String turnId, Instant since) {
            return read(topics.toolResults(), turnId, since, ToolResult.class);
        }

        @Override
        public List<ControlMessage> commands(String turnId, Instant since) {
            return read(topics.control(), turnId, since, ControlMessage.class);
        }

        private <T> List<T> read(String topic, String key, Instant since, Class<T> type) {
            List<T> values = new ArrayList<>();
            readKey(reads, topic, key, since, record -> values.add(format.read(record.topic(), record.value(), type)));
            return values;
        }
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
