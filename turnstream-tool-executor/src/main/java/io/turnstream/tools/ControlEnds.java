package io.turnstream.tools;

import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Takes {@link ControlFence}s: the end offset of every partition of {@code llm.control}, asked of the brokers (one
 * ListOffsets request per leader) with a consumer of its own that reads nothing. Its isolation is read_uncommitted, so an
 * end is the high watermark: a read_committed end stops before the first open transaction (a gateway's or an executor's
 * notices), and a cancel written after that transaction began would lie past it. The listener, reading read_committed,
 * gets past such an end once the transactions below it are decided.
 */
final class ControlEnds implements AutoCloseable {

    /** How long the loop waits for the ends before it reads the poll's calls again after a backoff. */
    private static final Duration WAIT = Duration.ofSeconds(2);
    /** How often the topic's partitions are looked up again (a consumer that subscribes to nothing asks the brokers each time). */
    private static final Duration PARTITIONS_REFRESH = Duration.ofSeconds(30);

    private final String topic;
    private final KafkaConsumer<String, byte[]> consumer;
    private List<TopicPartition> partitions;
    private long refreshPartitionsAt;

    /** @param consumerProps a consumer without a group, read_uncommitted ({@link ToolExecutorClients#controlEnds()}) */
    ControlEnds(Properties consumerProps, String topic) {
        this.topic = topic;
        this.consumer = new KafkaConsumer<>(consumerProps, new StringDeserializer(), new ByteArrayDeserializer());
    }

    /**
     * The ends now.
     *
     * @throws org.apache.kafka.common.errors.RetriableException when the brokers did not answer in time
     */
    ControlFence now() {
        if (partitions == null || System.nanoTime() - refreshPartitionsAt >= 0) {
            partitions = consumer.partitionsFor(topic, WAIT).stream()
                    .map(info -> new TopicPartition(topic, info.partition())).toList();
            refreshPartitionsAt = System.nanoTime() + PARTITIONS_REFRESH.toNanos();
        }
        return new ControlFence(consumer.endOffsets(partitions, WAIT));
    }

    @Override
    public void close() {
        consumer.close();
    }
}
