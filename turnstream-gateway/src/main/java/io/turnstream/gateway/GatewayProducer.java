package io.turnstream.gateway;

import io.turnstream.model.ControlMessage;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.Topics;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.ServiceMetrics;
import io.turnstream.runtime.TraceContext;
import java.time.Duration;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The gateway's one Kafka producer. Raw events are keyed by run id, so a run's events share one
 * partition and stay in order; the producer is idempotent with {@code acks=all}, so a retried send
 * is neither lost nor doubled. Cancel commands go to the control topic keyed by turn id.
 */
public final class GatewayProducer implements AutoCloseable {

    private final KafkaProducer<String, byte[]> producer;
    private final Topics topics;
    private final WireFormat format;
    /** Whether the latest send that finished failed: the producer cannot reach the cluster (or is closed). */
    private volatile boolean lastSendFailed;

    public GatewayProducer(Properties kafkaProperties, Topics topics, WireFormat format) {
        Properties props = new Properties();
        props.putAll(kafkaProperties);
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.putIfAbsent(ProducerConfig.CLIENT_ID_CONFIG, "turnstream-gateway");
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        this.producer = new KafkaProducer<>(props);
        this.topics = topics;
        this.format = format;
    }

    /** Exports the producer's client metrics; they go when the producer closes. */
    void bindTo(ServiceMetrics metrics) {
        metrics.bind(producer);
    }

    /**
     * Sends one event of a run, with the turn's trace context in {@code trace_context} and as headers;
     * completes when the broker has it, or exceptionally when it never will.
     */
    public CompletableFuture<Void> rawEvent(String runId, TraceContext trace, StreamPayload payload) {
        StreamEvent event = new StreamEvent(UUID.randomUUID().toString(), System.currentTimeMillis(), trace.toJson(), runId,
                payload.type(), payload);
        ProducerRecord<String, byte[]> record = new ProducerRecord<>(topics.rawEvents(), runId,
                format.write(topics.rawEvents(), event));
        trace.addTo(record.headers());
        return send(record);
    }

    public CompletableFuture<Void> control(ControlMessage message) {
        return send(new ProducerRecord<>(topics.control(), message.turnId(), format.write(topics.control(), message)));
    }

    private CompletableFuture<Void> send(ProducerRecord<String, byte[]> record) {
        CompletableFuture<Void> sent = new CompletableFuture<>();
        try {
            producer.send(record, (metadata, error) -> {
                lastSendFailed = error != null;
                if (error != null) {
                    sent.completeExceptionally(error);
                } else {
                    sent.complete(null);
                }
            });
        } catch (RuntimeException e) {
            lastSendFailed = true;
            sent.completeExceptionally(e);
        }
        return sent;
    }

    /** False when the latest send failed; a later successful send makes it healthy again. */
    public boolean healthy() {
        return !lastSendFailed;
    }

    @Override
    public void close() {
        producer.close(Duration.ofSeconds(30));
    }
}
