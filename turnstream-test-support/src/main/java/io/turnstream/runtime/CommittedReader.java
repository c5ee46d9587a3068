package io.turnstream.runtime;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.awaitility.Awaitility;

/**
 * Reads one topic from the beginning with a {@code read_committed} consumer, as a client of the
 * pipeline would: records of aborted transactions never show. Keeps everything read so far.
 */
public final class CommittedReader implements AutoCloseable {

    private final KafkaConsumer<String, String> consumer;
    private final List<ConsumerRecord<String, String>> records = new ArrayList<>();

    public CommittedReader(String bootstrapServers, String topic) {
        this.consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class));
        List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                .map(p -> new TopicPartition(topic, p.partition())).toList();
        consumer.assign(partitions);
        consumer.seekToBeginning(partitions);
    }

    /** Reads what is available now and returns everything read so far. */
    public synchronized List<ConsumerRecord<String, String>> poll() {
        consumer.poll(Duration.ofMillis(200)).forEach(records::add);
        return List.copyOf(records);
    }

    /** Polls until {@code done} holds for everything read so far (at most {@code timeout}). */
    public List<ConsumerRecord<String, String>> awaitUntil(Duration timeout, Predicate<List<ConsumerRecord<String, String>>> done) {
        return Awaitility.await().atMost(timeout).pollInterval(Duration.ofMillis(10)).until(this::poll, done);
    }

    /**
     * Reads up to the end of what was committed when called (the last stable offset of each partition)
     * and returns everything read so far.
     */
    public List<ConsumerRecord<String, String>> readToEnd(Duration timeout) {
        Map<TopicPartition, Long> end;
        synchronized (this) {
            end = consumer.endOffsets(consumer.assignment(), timeout);
        }
        return Awaitility.await("the end of " + end).atMost(timeout).pollInSameThread().pollInterval(Duration.ofMillis(10))
                .until(this::poll, read -> reached(end));
    }

    private synchronized boolean reached(Map<TopicPartition, Long> end) {
        return end.entrySet().stream().allMatch(e -> consumer.position(e.getKey()) >= e.getValue());
    }

    @Override
    public synchronized void close() {
        consumer.close();
    }
}
