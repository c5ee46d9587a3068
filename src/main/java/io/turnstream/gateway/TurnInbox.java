package io.turnstream.gateway;

import io.turnstream.model.ControlMessage;
import io.turnstream.model.ToolResult;
import io.turnstream.model.Topics;
import io.turnstream.model.WireFormat;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What Kafka tells the gateway's running turns: tool results ({@code llm.tool-results}) and cancel
 * commands ({@code llm.control}). Every gateway instance must see the results of its own turns,
 * wherever their partition is, so this consumer is assigned every partition of both topics (no
 * consumer group) and starts at their end: a gateway only waits for results of calls its running
 * turns made. New partitions are picked up periodically.
 */
final class TurnInbox implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(TurnInbox.class);
    private static final Duration PARTITION_REFRESH = Duration.ofSeconds(30);

    private final KafkaConsumer<String, byte[]> consumer;
    private final Topics topics;
    private final WireFormat format;
    private final TurnRegistry registry;
    private final GatewayMetrics metrics;
    private final Thread thread;
    private volatile boolean running = true;

    TurnInbox(Properties kafkaProperties, Topics topics, WireFormat format, TurnRegistry registry,
              GatewayMetrics metrics) {
        Properties props = new Properties();
        props.putAll(kafkaProperties);
        props.remove(ConsumerConfig.GROUP_ID_CONFIG);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.putIfAbsent(ConsumerConfig.CLIENT_ID_CONFIG, "turnstream-gateway-inbox");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        this.consumer = new KafkaConsumer<>(props);
        this.topics = topics;
        this.format = format;
        this.registry = registry;
        this.metrics = metrics;
        try {
            Set<TopicPartition> partitions = partitions();
            consumer.assign(partitions);
            consumer.seekToEnd(partitions);
            // resolve the end offsets now, so nothing produced after the gateway started is skipped
            partitions.forEach(consumer::position);
        } catch (RuntimeException e) {
            consumer.close();
            throw e;
        }
        this.thread = new Thread(this::run, "turnstream-gateway-inbox");
        this.thread.setDaemon(true);
        this.thread.start();
    }

    private Set<TopicPartition> partitions() {
        Set<TopicPartition> partitions = new HashSet<>();
        for (String topic : List.of(topics.toolResults(), topics.control())) {
            List<PartitionInfo> infos = consumer.partitionsFor(topic, Duration.ofSeconds(30));
            if (infos == null || infos.isEmpty()) {
                throw new IllegalStateException("topic " + topic + " does not exist; create the topics first "
                        + "(turnstream topics --bootstrap-servers ...)");
            }
            infos.forEach(info -> partitions.add(new TopicPartition(topic, info.partition())));
        }
        return partitions;
    }

    private void run() {
        long nextRefresh = System.nanoTime() + PARTITION_REFRESH.toNanos();
        try {
            while (running) {
                for (ConsumerRecord<String, byte[]> record : consumer.poll(Duration.ofMillis(500))) {
                    dispatch(record);
                }
                if (System.nanoTime() > nextRefresh) {
                    addNewPartitions();
                    nextRefresh = System.nanoTime() + PARTITION_REFRESH.toNanos();
                }
            }
        } catch (WakeupException closing) {
            // close() woke us up
        } catch (RuntimeException e) {
            LOG.error("the gateway stopped reading tool results and cancels; running turns will time out", e);
        } finally {
            consumer.close(Duration.ofSeconds(5));
        }
    }

    private void addNewPartitions() {
        Set<TopicPartition> all = partitions();
        List<TopicPartition> added = new ArrayList<>(all);
        added.removeAll(consumer.assignment());
        if (!added.isEmpty()) {
            consumer.assign(all);
            consumer.seekToBeginning(added);
            LOG.info("reading new partitions {}", added);
        }
    }

    private void dispatch(ConsumerRecord<String, byte[]> record) {
        try {
            if (record.topic().equals(topics.toolResults())) {
                ToolResult result = format.read(record.topic(), record.value(), ToolResult.class);
                String turnId = result.turnId() != null ? result.turnId() : record.key();
                if (turnId == null || result.callId() == null) {
                    throw new IOException("a tool result needs a turn id (or key) and a call id");
                }
                if (registry.deliver(turnId, result)) {
                    metrics.increment(GatewayMetrics.Counter.TOOL_RESULTS_RECEIVED);
                }
            } else {
                ControlMessage command = format.read(record.topic(), record.value(), ControlMessage.class);
                String turnId = command.turnId() != null ? command.turnId() : record.key();
                if (turnId == null) {
                    throw new IOException("a control command needs a turn id (or key)");
                }
                if (ControlMessage.CANCEL.equals(command.type()) && registry.cancel(turnId, command.reason())) {
                    LOG.info("turn {} cancelled through {}: {}", turnId, topics.control(), command.reason());
                }
            }
        } catch (IOException | RuntimeException e) {
            metrics.increment(GatewayMetrics.Counter.BAD_INPUT_RECORDS);
            LOG.warn("skipped an unreadable record at {}-{}@{}: {}", record.topic(), record.partition(),
                    record.offset(), e.getMessage());
        }
    }

    @Override
    public void close() {
        running = false;
        consumer.wakeup();
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
