package io.turnstream.tools;

import io.turnstream.runtime.ServiceMetrics;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.FencedInstanceIdException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The executor's transactional producer: publishes a batch of the outbox together with the consumer
 * offsets it completes, and after a failed transaction aborts it, or replaces itself when it cannot or was fenced.
 */
final class ResultTransactions implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ResultTransactions.class);

    private final Properties properties;
    private final ServiceMetrics metrics;
    /** True once the executor is closing: retries of a timed-out step stop then. */
    private final BooleanSupplier closing;
    private KafkaProducer<String, byte[]> producer;
    private AutoCloseable producerMetrics;

    ResultTransactions(Properties properties, ServiceMetrics metrics, BooleanSupplier closing) {
        this.properties = properties;
        this.metrics = metrics;
        this.closing = closing;
        openProducer();
    }

    /**
     * Publishes {@code records} and commits {@code offsets} in one transaction. Throws a {@link KafkaException}
     * when it failed: then nothing of it is visible and {@link #abort()} must follow.
     */
    void publish(List<ProducerRecord<String, byte[]>> records, Map<TopicPartition, OffsetAndMetadata> offsets,
                 ConsumerGroupMetadata group) {
        producer.beginTransaction();
        records.forEach(producer::send);
        if (!offsets.isEmpty()) {
            producer.sendOffsetsToTransaction(offsets, group);
        }
        commit();
    }

    /** A commit that timed out (broker unreachable) may still complete: Kafka wants it retried, not aborted. */
    private void commit() {
        while (true) {
            try {
                producer.commitTransaction();
                return;
            } catch (TimeoutException e) {
                if (closing.getAsBoolean()) {
                    throw e;
                }
                LOG.warn("committing results timed out, retrying: {}", e.getMessage());
            }
        }
    }

    /** Aborts the failed transaction, or replaces the producer when it cannot; fencing is rethrown. */
    void abort() {
        try {
            producer.abortTransaction();
        } catch (ProducerFencedException | FencedInstanceIdException e) {
            throw e;
        } catch (KafkaException e) {
            renew();
        }
    }

    /**
     * A new producer with the same transactional id, which aborts whatever the old one left open: after an abort
     * that failed, or when the coordinator fenced the producer by aborting its transaction at the timeout.
     */
    void renew() {
        producer.close(Duration.ZERO);
        closeQuietly(producerMetrics);
        openProducer();
    }

    /**
     * A producer with this executor's transactional id, once its coordinator answered. A broker that is not
     * reachable yet (starting, failing over) is waited for, at start as after a failure, rather than ending the executor.
     */
    private void openProducer() {
        while (true) {
            producer = new KafkaProducer<>(properties, new StringSerializer(), new ByteArraySerializer());
            try {
                producer.initTransactions();
                producerMetrics = metrics.bind(producer);
                return;
            } catch (TimeoutException e) {
                producer.close(Duration.ZERO);
                if (closing.getAsBoolean()) {
                    throw e;
                }
                LOG.warn("cannot reach the transaction coordinator, retrying: {}", e.getMessage());
            }
        }
    }

    /** A producer that cannot reach the broker would wait forever for its unsent records: they are not needed. */
    @Override
    public void close() {
        producer.close(Duration.ofSeconds(5));
        closeQuietly(producerMetrics);
    }

    private static void closeQuietly(AutoCloseable closeable) {
        if (closeable != null) {
            try {
                closeable.close();
            } catch (Exception e) {
                LOG.debug("closing the producer's metrics failed", e);
            }
        }
    }
}
