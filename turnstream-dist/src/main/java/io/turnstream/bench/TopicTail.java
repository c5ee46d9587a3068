package io.turnstream.bench;

import io.turnstream.runtime.TopicReader;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.consumer.ConsumerConfig;

/**
 * Reads every partition of one topic from the beginning with a {@link TopicReader}, as a
 * {@code read_committed} client sees it, and hands each record to a handler with the
 * {@link System#nanoTime()} at which the poll returned it: the moment it became visible to a consumer.
 */
final class TopicTail implements AutoCloseable {

    private final TopicReader reader;

    private TopicTail(TopicReader reader) {
        this.reader = reader;
    }

    static String threadName(String topic) {
        return "bench-tail-" + topic;
    }

    /** A topic created a moment ago may not be in the metadata yet: the reader waits for it. */
    static TopicTail start(String bootstrapServers, String topic, TopicReader.Handler handler) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        // the visible moment matters: answer a fetch as soon as anything is there
        props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "10");
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
        return new TopicTail(TopicReader.reading(threadName(topic), props, List.of(topic))
                .from(TopicReader.Start.BEGINNING).start(handler));
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
    public void close() {
        reader.close();
    }
}
