package io.turnstream.gateway.api;

import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.TopicReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/**
 * The {@code Idempotency-Key}s every gateway has accepted in the last {@link IdempotencyKeys#RETENTION}, as
 * {@code llm.turn-requests} tells them: each request started under a key carries the key and the request's
 * fingerprint in its headers ({@link IdempotentStart}). Every gateway reads the topic from 24 h back, then as it
 * is written, so a retry that reaches another instance finds the key. Bounded: past {@code maxKeys} the oldest
 * are forgotten first.
 */
public final class IdempotencyIndex implements AutoCloseable {

    /** A key's first request: its fingerprint and the turn it started. */
    public record Taken(String fingerprint, TurnStatus turn, long acceptedAt) {
    }

    private final Clock clock;
    private final int maxKeys;
    /** By tenant and key ({@code tenant\nkey}), oldest first. */
    private final Map<String, Taken> taken = new LinkedHashMap<>();
    private final WireFormat format;
    private TopicReader reader;

    IdempotencyIndex(Clock clock, int maxKeys, WireFormat format) {
        this.clock = clock;
        this.maxKeys = maxKeys;
        this.format = format;
    }

    /** Reads {@code topic} (the turn requests) from {@link IdempotencyKeys#RETENTION} ago, then live. */
    public static IdempotencyIndex start(Properties kafkaProperties, String topic, WireFormat format, Clock clock,
                                         int maxKeys) {
        IdempotencyIndex index = new IdempotencyIndex(clock, maxKeys, format);
        index.reader = TopicReader.reading("turnstream-gateway-idempotency", kafkaProperties, List.of(topic))
                .from(TopicReader.Start.since(Instant.ofEpochMilli(clock.millis()
                        - IdempotencyKeys.RETENTION.toMillis())))
                .start((record, polledAtNanos) -> index.record(record));
        return index;
    }

    void record(ConsumerRecord<String, byte[]> record) throws IOException {
        String key = header(record, IdempotentStart.KEY_HEADER);
        String fingerprint = header(record, IdempotentStart.FINGERPRINT_HEADER);
        if (key == null || fingerprint == null) {
            return;
        }
        TurnRequestRecord request = format.read(record.topic(), record.value(), TurnRequestRecord.class);
        if (request.startsTurn()) {
            remember(request.tenantId(), key, new Taken(fingerprint, new TurnStatus(request.turnId(),
                    request.threadId(), request.runId(), TurnPhase.RUNNING), request.requestedAt()));
        }
    }

    /** Records a key's first request; a later record of the same key (a duplicate) changes nothing. */
    void remember(String tenantId, String key, Taken first) {
        synchronized (taken) {
            taken.putIfAbsent(id(tenantId, key), first);
            if (taken.size() > maxKeys) {
                taken.remove(taken.keySet().iterator().next());
            }
        }
    }

    /** The key's first request within {@link IdempotencyKeys#RETENTION}, if any gateway accepted one. */
    public Optional<Taken> find(String tenantId, String key) {
        long oldest = clock.millis() - IdempotencyKeys.RETENTION.toMillis();
        synchronized (taken) {
            // in the order they were accepted (near enough): the expired are at the head
            Iterator<Taken> all = taken.values().iterator();
            while (all.hasNext() && all.next().acceptedAt() <= oldest) {
                all.remove();
            }
            return Optional.ofNullable(taken.get(id(tenantId, key)));
        }
    }

    /** Completes when the keys of the last day that the topic held at start-up are read. */
    public CompletableFuture<Void> caughtUp() {
        return reader.caughtUp();
    }

    /** True while its reader reads. */
    public boolean healthy() {
        return reader == null || reader.healthy();
    }

    private static String id(String tenantId, String key) {
        return (tenantId == null ? "" : tenantId) + '\n' + key;
    }

    private static String header(ConsumerRecord<String, byte[]> record, String name) {
        Header header = record.headers().lastHeader(name);
        return header == null || header.value() == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        if (reader != null) {
            reader.close();
        }
    }
}
