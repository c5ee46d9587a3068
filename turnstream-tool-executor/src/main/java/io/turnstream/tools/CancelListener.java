package io.turnstream.tools;

import io.turnstream.model.ControlMessage;
import io.turnstream.model.WireFormat;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads {@code llm.control} on its own thread, every partition, so a cancel takes effect while the
 * tool-call partitions are paused or busy. It starts a while back in time ({@code lookBack}), so an
 * instance that takes over a turn still knows the turn was cancelled.
 */
final class CancelListener implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(CancelListener.class);

    private final KafkaConsumer<String, byte[]> consumer;
    private final String topic;
    private final WireFormat wire;
    private final Consumer<String> cancelTurn;
    private final Thread thread;
    private volatile boolean closed;

    CancelListener(Properties consumerProps, String topic, WireFormat wire, Duration lookBack, Consumer<String> cancelTurn) {
        this.topic = topic;
        this.wire = wire;
        this.cancelTurn = cancelTurn;
        this.consumer = new KafkaConsumer<>(consumerProps, new StringDeserializer(), new ByteArrayDeserializer());
        List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                .map(info -> new TopicPartition(topic, info.partition())).toList();
        consumer.assign(partitions);
        Map<TopicPartition, Long> since = new HashMap<>();
        partitions.forEach(partition -> since.put(partition, System.currentTimeMillis() - lookBack.toMillis()));
        Map<TopicPartition, OffsetAndTimestamp> offsets = consumer.offsetsForTimes(since);
        for (TopicPartition partition : partitions) {
            OffsetAndTimestamp offset = offsets.get(partition);
            if (offset == null) {
                consumer.seekToEnd(List.of(partition));
            } else {
                consumer.seek(partition, offset.offset());
            }
        }
        this.thread = new Thread(this::run, "turnstream-tool-cancels");
        thread.setDaemon(true);
    }

    CancelListener start() {
        thread.start();
        return this;
    }

    private void run() {
        while (!closed) {
            try {
                for (ConsumerRecord<String, byte[]> record : consumer.poll(Duration.ofMillis(500))) {
                    handle(record);
                }
            } catch (WakeupException e) {
                // close() woke us up
            } catch (KafkaException e) {
                LOG.warn("reading {} failed, retrying: {}", topic, e.toString());
            }
        }
        consumer.close();
    }

    private void handle(ConsumerRecord<String, byte[]> record) {
        ControlMessage message;
        try {
            message = wire.read(topic, record.value(), ControlMessage.class);
        } catch (IOException | IllegalArgumentException e) {
            LOG.warn("skipping unreadable control record {}-{}@{}: {}", record.topic(), record.partition(), record.offset(), e.getMessage());
            return;
        }
        if (ControlMessage.CANCEL.equals(message.type())) {
            String turnId = message.turnId() != null ? message.turnId() : record.key();
            if (turnId != null) {
                LOG.info("turn {} cancelled{}", turnId, message.reason() == null ? "" : ": " + message.reason());
                cancelTurn.accept(turnId);
            }
        }
    }

    @Override
    public void close() throws InterruptedException {
        closed = true;
        consumer.wakeup();
        if (thread.isAlive()) {
            thread.join();
        } else {
            consumer.close();
        }
    }
}
