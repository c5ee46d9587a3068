package io.turnstream.runtime;

import io.turnstream.model.Json;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.Topics;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** A plain KafkaProducer writing raw events to {@code llm.raw-events} as a gateway would: keyed by run id, JSON. */
public final class RawEventProducer implements AutoCloseable {

    private final KafkaProducer<String, byte[]> producer;
    private final String topic;

    public RawEventProducer(String bootstrapServers) {
        this.topic = Topics.DEFAULTS.rawEvents();
        this.producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class));
    }

    /** Sends the events in order and waits until the broker has them. */
    public void send(List<StreamEvent> events) {
        sendWithoutWaiting(events);
        producer.flush();
    }

    /** Sends without waiting for acknowledgement: buffered while the broker is away. */
    public void sendWithoutWaiting(List<StreamEvent> events) {
        for (StreamEvent event : events) {
            producer.send(new ProducerRecord<>(topic, event.runId(), Json.toBytes(event)));
        }
    }

    /** Sends arbitrary bytes, e.g. poison input, and waits for the broker. */
    public void sendRaw(String key, byte[] value) {
        producer.send(new ProducerRecord<>(topic, key, value));
        producer.flush();
    }

    public void flush() {
        producer.flush();
    }

    @Override
    public void close() {
        producer.close();
    }
}
