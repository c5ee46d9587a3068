package io.turnstream.gateway;

import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.ToolResult;
import io.turnstream.model.Topics;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.model.WireFormat;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.function.Predicate;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads what Kafka holds of a turn another gateway was running: its raw events (key run id, on the
 * run's partition of {@code llm.raw-events}) and the results of its tool calls (key turn id, on
 * {@code llm.tool-results}), each from shortly before the turn was accepted, found with
 * {@code offsetsForTimes}. Reads are read_committed and go up to the high watermark seen when they
 * start, so every transaction open at that moment (a dead owner's, once fenced) has resolved: what
 * was committed is all there, what was aborted is never seen.
 */
final class TurnResumer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(TurnResumer.class);
    /** Records are stamped by the clocks of different machines. */
    private static final Duration CLOCK_SKEW = Duration.ofMinutes(1);
    /** Transactions left open by a dead owner resolve when fenced or at their timeout. */
    private static final Duration READ_LIMIT = Duration.ofSeconds(60);

    private final Properties consumerProperties;
    private final Topics topics;
    private final WireFormat format;
    private final Admin admin;

    TurnResumer(Properties kafkaProperties, Topics topics, WireFormat format) {
        this.topics = topics;
        this.format = format;
        Properties props = new Properties();
        props.putAll(kafkaProperties);
        props.remove(ConsumerConfig.GROUP_ID_CONFIG);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, "turnstream-gateway-resume");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        this.consumerProperties = props;
        this.admin = Admin.create(kafkaProperties);
    }

    /**
     * How far the turn got. Results of tool calls the turn still waits for are handed to
     * {@code active} (which is registered first, so later results reach it through the inbox).
     */
    TurnProgress progress(TurnRequestRecord request, List<TurnRequestRecord> steps, String requestedModel,
                          TurnRegistry.ActiveTurn active) throws IOException {
        long since = request.requestedAt() - CLOCK_SKEW.toMillis();
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(consumerProperties)) {
            List<StreamPayload> events = new ArrayList<>();
            for (ConsumerRecord<String, byte[]> record : readKey(consumer, topics.rawEvents(), request.runId(), since)) {
                events.add(format.read(record.topic(), record.value(), StreamEvent.class).payload());
            }
            TurnProgress progress = TurnProgress.of(request.runId(), requestedModel, steps, events);
            if (progress.awaiting() != null && progress.endedStatus() == null) {
                for (ConsumerRecord<String, byte[]> record : readKey(consumer, topics.toolResults(), request.turnId(),
                        since)) {
                    ToolResult result = format.read(record.topic(), record.value(), ToolResult.class);
                    if (result.callId() != null) {
                        active.result(result.callId()).complete(result);
                    }
                }
            }
            return progress;
        }
    }

    private List<ConsumerRecord<String, byte[]>> readKey(KafkaConsumer<String, byte[]> consumer, String topic,
                                                         String key, long since) {
        int partitions = consumer.partitionsFor(topic, Duration.ofSeconds(30)).size();
        TopicPartition partition = new TopicPartition(topic,
                Utils.toPositive(Utils.murmur2(key.getBytes(StandardCharsets.UTF_8))) % partitions);
        OffsetAndTimestamp first = consumer.offsetsForTimes(Map.of(partition, Math.max(0, since))).get(partition);
        if (first == null) {
            return List.of();
        }
        return readToEnd(consumer, partition, first.offset(), key::equals);
    }

    /** Every record of a partition from {@code from} to its end, whose key passes {@code keys}. */
    List<ConsumerRecord<String, byte[]>> readToEnd(TopicPartition partition, long from, Predicate<String> keys) {
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(consumerProperties)) {
            return readToEnd(consumer, partition, from, keys);
        }
    }

    private List<ConsumerRecord<String, byte[]>> readToEnd(KafkaConsumer<String, byte[]> consumer,
                                                           TopicPartition partition, long from, Predicate<String> keys) {
        long end = highWatermark(partition);
        consumer.assign(List.of(partition));
        consumer.seek(partition, from);
        List<ConsumerRecord<String, byte[]>> records = new ArrayList<>();
        long deadline = System.nanoTime() + READ_LIMIT.toNanos();
        while (consumer.position(partition) < end) {
            if (System.nanoTime() > deadline) {
                LOG.warn("{} still has an open transaction after {} s; going on with what is committed",
                        partition, READ_LIMIT.toSeconds());
                break;
            }
            for (ConsumerRecord<String, byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                if (record.offset() < end && keys.test(record.key())) {
                    records.add(record);
                }
            }
        }
        return records;
    }

    private long highWatermark(TopicPartition partition) {
        try {
            return admin.listOffsets(Map.of(partition, OffsetSpec.latest()),
                    new ListOffsetsOptions(IsolationLevel.READ_UNCOMMITTED)).partitionResult(partition).get().offset();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KafkaException("interrupted while reading the end of " + partition, e);
        } catch (ExecutionException e) {
            throw new KafkaException("cannot read the end of " + partition, e.getCause());
        }
    }

    @Override
    public void close() {
        admin.close(Duration.ofSeconds(5));
    }
}
