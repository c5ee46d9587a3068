package io.turnstream.tools;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.ConsumerInterceptor;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerInterceptor;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Holds a transaction open, as a broker failing over does, until the transaction coordinator has aborted it at its
 * {@code transaction.timeout.ms}: a producer interceptor ({@code interceptor.classes}) that, once armed for a
 * transactional id and a topic, holds the next acknowledgement of a record on that topic. Acknowledgements run on
 * the producer's I/O thread, so the transaction's offsets and commit wait behind it and reach the coordinator after
 * the abort. It is a consumer interceptor too (doing nothing), since the executor's Kafka settings reach its consumers.
 */
public final class HoldUntilAborted implements ProducerInterceptor<Object, Object>, ConsumerInterceptor<Object, Object> {

    /** Transactional id to the topic whose next acknowledgement is held. */
    private static final Map<String, String> ARMED = new ConcurrentHashMap<>();
    /** Transactional ids fenced (an Admin {@code fenceProducers}) after the abort, before the held producer goes on. */
    private static final Set<String> FENCE_TOO = ConcurrentHashMap.newKeySet();
    /** Transactional ids whose transaction was held until the coordinator had aborted it. */
    private static final Set<String> ABORTED = ConcurrentHashMap.newKeySet();

    private String transactionalId;
    private String bootstrapServers;

    static void holdNext(String transactionalId, String topic) {
        ARMED.put(transactionalId, topic);
    }

    /**
     * As {@link #holdNext}, and once the coordinator has aborted the transaction its epoch is bumped once more, as
     * by another producer with the transactional id: the held producer's commit then fails with
     * {@code ProducerFencedException} instead of the {@code InvalidTxnStateException} a bare abort gives on one
     * broker (Kafka takes a commit one epoch behind for a retry, and a retried commit of an aborted transaction is an
     * invalid state; a broker's failover fenced a live executor with {@code ProducerFencedException}).
     */
    static void holdNextAndFence(String transactionalId, String topic) {
        FENCE_TOO.add(transactionalId);
        holdNext(transactionalId, topic);
    }

    static boolean heldUntilAborted(String transactionalId) {
        return ABORTED.contains(transactionalId);
    }

    @Override
    public void configure(Map<String, ?> configs) {
        Object id = configs.get(ProducerConfig.TRANSACTIONAL_ID_CONFIG);
        transactionalId = id == null ? null : id.toString();
        Object servers = configs.get(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG);
        bootstrapServers = servers instanceof List<?> list ? String.join(",", list.stream().map(Object::toString).toList())
                : String.valueOf(servers);
    }

    @Override
    public void onAcknowledgement(RecordMetadata metadata, Exception exception) {
        if (transactionalId == null || metadata == null || exception != null || !ARMED.remove(transactionalId, metadata.topic())) {
            return;
        }
        // the record is written, so the transaction is open on the coordinator; the only way out while its commit
        // waits here is the coordinator's abort at the timeout
        try (Admin admin = Admin.create(Map.<String, Object>of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers))) {
            await("the coordinator aborts the held transaction").atMost(Duration.ofSeconds(60)).until(() ->
                    admin.describeTransactions(List.of(transactionalId)).description(transactionalId).get().state()
                            == TransactionState.COMPLETE_ABORT);
            if (FENCE_TOO.remove(transactionalId)) {
                admin.fenceProducers(List.of(transactionalId)).all().get(60, TimeUnit.SECONDS);
            }
        } catch (Exception e) {
            throw new IllegalStateException("holding the transaction of " + transactionalId + " failed", e);
        }
        ABORTED.add(transactionalId);
    }

    @Override
    public ProducerRecord<Object, Object> onSend(ProducerRecord<Object, Object> record) {
        return record;
    }

    @Override
    public ConsumerRecords<Object, Object> onConsume(ConsumerRecords<Object, Object> records) {
        return records;
    }

    @Override
    public void onCommit(Map<TopicPartition, OffsetAndMetadata> offsets) {
    }

    @Override
    public void close() {
    }
}
