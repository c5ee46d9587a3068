package io.turnstream.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Reads every partition of one topic from the beginning, as a {@code read_committed} client sees
 * it, on its own thread, and hands each record to a handler with the {@link System#nanoTime()} at
 * which the poll returned it: the moment it became visible to a consumer.
 */
final class TopicTail implements AutoCloseable {

    /** Receives each record on the tail's thread. */
    interface Handler {
        void accept(ConsumerRecord<String, byte[]> record, long visibleNanos) throws IOException;
    }

    private final KafkaConsumer<String, byte[]> consumer;
    private final Thread thread;
    private volatile boolean running = true;

    private TopicTail(String bootstrapServers, String topic, Handler handler) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        // the visible moment matters: answer a fetch as soon as anything is there
        props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "10");
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
        this.consumer = new KafkaConsumer<>(props, new StringDeserializer(), new ByteArrayDeserializer());
        List<TopicPartition> partitions = partitions(topic);
        consumer.assign(partitions);
        consumer.seekToBeginning(partitions);
        this.thread = new Thread(() -> loop(handler), threadName(topic));
        thread.setDaemon(true);
    }

    /** A topic created a moment ago may not be in the metadata yet: ask again until it is. */
    private List<TopicPartition> partitions(String topic) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            if (!partitions.isEmpty()) {
                return partitions;
            }
            if (System.nanoTime() > deadline) {
                consumer.close();
                throw new IllegalStateException("topic " + topic + " has no partitions in the metadata after 30 s");
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                consumer.close();
                throw new IllegalStateException("interrupted while waiting for topic " + topic, e);
            }
        }
    }

    static String threadName(String topic) {
        return "bench-tail-" + topic;
    }

    static TopicTail start(String bootstrapServers, String topic, Handler handler) {
        TopicTail tail = new TopicTail(bootstrapServers, topic, handler);
        tail.thread.start();
        return tail;
    }

    private void loop(Handler handler) {
        try {
            while (running) {
                var records = consumer.poll(Duration.ofMillis(100));
                long now = System.nanoTime();
                for (ConsumerRecord<String, byte[]> record : records) {
                    handler.accept(record, now);
                }
            }
        } catch (WakeupException stopping) {
            // close() woke the poll
        } catch (IOException e) {
            throw new UncheckedIOException("unreadable record on the tailed topic", e);
        } finally {
            consumer.close();
        }
    }

    /** Waits until {@code done} holds, checking every 50 ms; false if {@code limit} passed first. */
    static boolean await(BooleanSupplier done, Duration limit) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(50);
        }
        return true;
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        consumer.wakeup();
        thread.join(10_000);
    }
}
