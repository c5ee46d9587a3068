package io.turnstream.runtime;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads every partition of some topics on one daemon thread, without a consumer group (each
 * instance sees everything), {@code read_committed}, and hands each record to a handler. It starts
 * at the end (only what is written from now on) or at the beginning (a whole compacted topic), and
 * picks up partitions added later from their beginning. The records of each poll are handed over
 * in time order across partitions. The topics must exist.
 */
public final class TopicReader implements AutoCloseable {

    /** Where reading starts. */
    public enum Start { BEGINNING, END }

    private static final Logger LOG = LoggerFactory.getLogger(TopicReader.class);
    private static final Duration PARTITION_REFRESH = Duration.ofSeconds(30);

    private final String name;
    private final List<String> topics;
    private final KafkaConsumer<String, byte[]> consumer;
    private final Consumer<ConsumerRecord<String, byte[]>> handler;
    private final Map<TopicPartition, Long> endAtStart;
    private final CompletableFuture<Void> caughtUp = new CompletableFuture<>();
    private final Thread thread;
    /** The consumer's open connections to brokers; its value may be read from any thread. */
    private final Metric connections;
    private volatile boolean running = true;

    /**
     * @param name names the thread and the client id, for logs
     * @param handler called on the reader's thread; an exception it throws is logged and the record skipped
     */
    public TopicReader(String name, Properties kafkaProperties, List<String> topics, Start start,
                       Consumer<ConsumerRecord<String, byte[]>> handler) {
        Properties props = new Properties();
        props.putAll(kafkaProperties);
        props.remove(ConsumerConfig.GROUP_ID_CONFIG);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.putIfAbsent(ConsumerConfig.CLIENT_ID_CONFIG, name);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        this.name = name;
        this.topics = List.copyOf(topics);
        this.handler = handler;
        this.consumer = new KafkaConsumer<>(props);
        try {
            Set<TopicPartition> partitions = partitions();
            consumer.assign(partitions);
            if (start == Start.END) {
                consumer.seekToEnd(partitions);
            } else {
                consumer.seekToBeginning(partitions);
            }
            // resolve the positions now, so that "the end" means the end when this reader was made
            partitions.forEach(consumer::position);
            this.endAtStart = consumer.endOffsets(partitions);
        } catch (RuntimeException e) {
            consumer.close();
            throw e;
        }
        this.connections = consumer.metrics().values().stream()
                .filter(metric -> metric.metricName().name().equals("connection-count")
                        && metric.metricName().group().equals("consumer-metrics"))
                .findFirst().orElse(null);
        this.thread = new Thread(this::run, name);
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /** Exports the reader's consumer metrics. */
    public void bindTo(ServiceMetrics metrics) {
        metrics.bind(consumer);
    }

    /** Completes once everything that was in the topics when this reader was made has been handled. */
    public CompletableFuture<Void> caughtUp() {
        return caughtUp;
    }

    /** True while the reader reads and is connected to a broker; false once it stopped or lost the cluster. */
    public boolean healthy() {
        return running && thread.isAlive()
                && (connections == null || ((Number) connections.metricValue()).doubleValue() > 0);
    }

    private Set<TopicPartition> partitions() {
        Set<TopicPartition> partitions = new HashSet<>();
        for (String topic : topics) {
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
                handleInTimeOrder(consumer.poll(Duration.ofMillis(500)));
                if (!caughtUp.isDone() && endAtStart.entrySet().stream()
                        .allMatch(end -> consumer.position(end.getKey()) >= end.getValue())) {
                    caughtUp.complete(null);
                }
                if (System.nanoTime() > nextRefresh) {
                    addNewPartitions();
                    nextRefresh = System.nanoTime() + PARTITION_REFRESH.toNanos();
                }
            }
        } catch (WakeupException closing) {
            // close() woke us up
        } catch (RuntimeException e) {
            LOG.error("{} stopped reading {}", name, topics, e);
        } finally {
            consumer.close(Duration.ofSeconds(5));
        }
    }

    /**
     * Hands over a poll's records oldest first across partitions, each partition in its own order, so
     * records of several topics written together (an upsert and the append beside it) arrive as written
     * rather than one partition's batch after another's.
     */
    private void handleInTimeOrder(ConsumerRecords<String, byte[]> records) {
        List<List<ConsumerRecord<String, byte[]>>> partitions = records.partitions().stream().map(records::records)
                .toList();
        int[] next = new int[partitions.size()];
        while (true) {
            int oldest = -1;
            for (int i = 0; i < partitions.size(); i++) {
                if (next[i] < partitions.get(i).size() && (oldest < 0 || partitions.get(i).get(next[i]).timestamp()
                        < partitions.get(oldest).get(next[oldest]).timestamp())) {
                    oldest = i;
                }
            }
            if (oldest < 0) {
                return;
            }
            handle(partitions.get(oldest).get(next[oldest]++));
        }
    }

    private void handle(ConsumerRecord<String, byte[]> record) {
        try {
            handler.accept(record);
        } catch (RuntimeException e) {
            LOG.warn("{} skipped an unreadable record at {}-{}@{}: {}", name, record.topic(), record.partition(),
                    record.offset(), e.getMessage());
        }
    }

    private void addNewPartitions() {
        Set<TopicPartition> all = partitions();
        List<TopicPartition> added = new ArrayList<>(all);
        added.removeAll(consumer.assignment());
        if (!added.isEmpty()) {
            consumer.assign(all);
            consumer.seekToBeginning(added);
            LOG.info("{} reads new partitions {}", name, added);
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
