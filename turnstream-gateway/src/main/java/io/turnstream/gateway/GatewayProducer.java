package io.turnstream.gateway;

import io.turnstream.model.ControlMessage;
import io.turnstream.model.ScopedIds;
import io.turnstream.model.Topics;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.SendCompletions;
import io.turnstream.runtime.ServiceMetrics;
import io.turnstream.runtime.TraceContext;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The gateway's producer of what any instance writes, whichever owns the turn: accepted turns to
 * {@code llm.turn-requests} (key thread id) and cancel commands to the control topic (key turn id).
 * It is idempotent with {@code acks=all}, so a retried send is neither lost nor doubled. A turn's
 * raw events are written by the owner of its partition, transactionally ({@link OwnedPartition}).
 */
public final class GatewayProducer implements AutoCloseable {

    private final KafkaProducer<String, byte[]> producer;
    /** Completes the sends' futures off Kafka's I/O thread (see {@link SendCompletions}). */
    private final SendCompletions completions = new SendCompletions("turnstream-gateway-sent");
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
     * An accepted turn, keyed by its tenant's thread ({@link ScopedIds#threadKey}), for the gateway that owns
     * the thread's partition; the request's trace context goes along in the headers, with {@code headers}.
     */
    public CompletableFuture<Void> turnRequest(TurnRequestRecord request, TraceContext trace,
                                               Map<String, String> headers) {
        ProducerRecord<String, byte[]> record = new ProducerRecord<>(topics.turnRequests(),
                ScopedIds.threadKey(request.tenantId(), request.threadId()),
                format.write(topics.turnRequests(), request));
        trace.addTo(record.headers());
        headers.forEach((name, value) -> record.headers().add(name, value.getBytes(StandardCharsets.UTF_8)));
        return send(record);
    }

    public CompletableFuture<Void> control(ControlMessage message) {
        return send(new ProducerRecord<>(topics.control(), message.turnId(), format.write(topics.control(), message)));
    }

    /**
     * A tool a person allowed for the rest of a thread: the approval that allowed it, on the compacted
     * {@code llm.thread-allowances} under {@link io.turnstream.gateway.loop.ThreadAllowances#key}.
     */
    public CompletableFuture<Void> threadAllowance(String key, ControlMessage approval) {
        return send(new ProducerRecord<>(topics.threadAllowances(), key,
                format.write(topics.threadAllowances(), approval)));
    }

    private CompletableFuture<Void> send(ProducerRecord<String, byte[]> record) {
        CompletableFuture<Void> sent = new CompletableFuture<>();
        try {
            producer.send(record, (metadata, error) -> {
                lastSendFailed = error != null;
                completions.complete(sent, error);
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
        completions.close();
    }
}
