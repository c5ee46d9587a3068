package io.turnstream.gateway.api;

import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.TopicReader;
import io.turnstream.schema.SchemaRegistryException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/**
 * What {@code llm.turn-requests} tells every gateway of the turns requested in the last
 * {@link IdempotencyKeys#RETENTION}: the {@code Idempotency-Key}s taken (each request started under a key carries the
 * key and the request's fingerprint in its headers, {@link IdempotentStart}), so a retry that reaches another
 * instance finds the key; which request took a key in each partition (the first there, in Kafka's order), so the
 * instance that accepted a request and the one that runs its turn agree on whether it won its key; and every turn
 * requested, with its tenant, so a turn that waits behind its thread's running turn (busy-thread policy
 * {@code enqueue}), which shows nowhere else yet, is known to every instance. Every gateway reads the topic from
 * 24 h back, then as it is written. Bounded: past {@code maxKeys} the oldest are forgotten first.
 *
 * <p>A request record that cannot be read for now (on Avro, a schema registry that cannot be reached) is not
 * skipped: its reader reads it again after a backoff ({@link TopicReader}), and until it is read
 * {@link #waitingFor()} says why, so that a key not found meanwhile is not taken for a free one, nor a request not
 * read back for one that won its key ({@link #keyTakenBy}).
 */
public final class IdempotencyIndex implements AutoCloseable {

    /** A key's first request: its fingerprint and the turn it started. */
    public record Taken(String fingerprint, TurnStatus turn, long acceptedAt) {
    }

    /** A turn requested on the topic, by its tenant (null for a gateway without keys). */
    public record Requested(String tenantId, TurnStatus turn) {
    }

    /** How often a wait for a request to be read back looks whether the index stalled meanwhile. */
    private static final Duration STALL_CHECK = Duration.ofMillis(100);

    private final Clock clock;
    private final int maxKeys;
    /** By tenant and key ({@code tenant\nkey}), oldest first. */
    private final Map<String, Taken> taken = new LinkedHashMap<>();
    /** The first request of a key in one partition, by {@code tenant\nkey\npartition}; guarded by {@link #taken}. */
    private final Map<String, Taken> firstInPartition;
    /** Where each keyed request was read (its {@link #firstInPartition} slot), by turn id, once read. */
    private final Map<String, CompletableFuture<String>> placed;
    /** Every turn requested, by turn id. */
    private final Map<String, Requested> requested;
    private final WireFormat format;
    /** Null in tests that hand the index its records themselves. */
    private TopicReader reader;

    IdempotencyIndex(Clock clock, int maxKeys, WireFormat format) {
        this.clock = clock;
        this.maxKeys = maxKeys;
        this.format = format;
        this.firstInPartition = bounded(maxKeys);
        this.placed = bounded(maxKeys);
        this.requested = bounded(maxKeys);
    }

    private static <V> Map<String, V> bounded(int max) {
        return new LinkedHashMap<>() {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, V> eldest) {
                return size() > max;
            }
        };
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

    /**
     * @throws SchemaRegistryException when the record cannot be read for now: its reader reads it again later
     */
    void record(ConsumerRecord<String, byte[]> record) {
        TurnRequestRecord request;
        try {
            request = format.read(record.topic(), record.value(), TurnRequestRecord.class);
        } catch (SchemaRegistryException registryDown) {
            throw registryDown;
        } catch (IOException | RuntimeException unreadable) {
            // not a request this index can learn from; the gateway that owns its partition reports it
            return;
        }
        if (request == null || !request.startsTurn()) {
            return;
        }
        TurnStatus turn = new TurnStatus(request.turnId(), request.threadId(), request.runId(), TurnPhase.RUNNING);
        String key = header(record, IdempotentStart.KEY_HEADER);
        String fingerprint = header(record, IdempotentStart.FINGERPRINT_HEADER);
        synchronized (taken) {
            requested.putIfAbsent(request.turnId(), new Requested(request.tenantId(), turn));
            if (key == null || fingerprint == null) {
                return;
            }
            Taken first = new Taken(fingerprint, turn, request.requestedAt());
            remember(request.tenantId(), key, first);
            String slot = id(request.tenantId(), key) + '\n' + record.partition();
            firstInPartition.putIfAbsent(slot, first);
            placed.computeIfAbsent(request.turnId(), turnId -> new CompletableFuture<>()).complete(slot);
        }
    }

    /**
     * The turn that took the key of the keyed request of turn {@code turnId}: the key's first request in the same
     * partition of the topic, in Kafka's order there, which every gateway reads alike. Known once this index has
     * read that request; empty when it has not within {@code wait}.
     *
     * @throws SchemaRegistryException when the index has not read the request and cannot read on for now (its reader
     *                                 waits for the schema registry, {@link #waitingFor()}): which request took the
     *                                 key is not known, and the request must not be taken for the one that did
     */
    public Optional<TurnStatus> keyTakenBy(String turnId, Duration wait) {
        CompletableFuture<String> read;
        synchronized (taken) {
            read = placed.computeIfAbsent(turnId, id -> new CompletableFuture<>());
        }
        long deadline = System.nanoTime() + wait.toNanos();
        String slot = null;
        while (slot == null) {
            try {
                long left = Math.max(0, deadline - System.nanoTime());
                slot = read.get(Math.min(left, STALL_CHECK.toNanos()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Optional.empty();
            } catch (ExecutionException e) {
                return Optional.empty();
            } catch (TimeoutException notReadYet) {
                Optional<SchemaRegistryException> stalled = waitingFor();
                if (stalled.isPresent()) {
                    throw new SchemaRegistryException("the turn requests cannot be read for now ("
                            + stalled.get().getMessage() + ")", stalled.get().errorCode(), stalled.get());
                }
                if (System.nanoTime() - deadline >= 0) {
                    return Optional.empty();
                }
            }
        }
        synchronized (taken) {
            return Optional.ofNullable(firstInPartition.get(slot)).map(Taken::turn);
        }
    }

    /**
     * Why a request record is not read yet, to be read again after a backoff (a schema registry that cannot be
     * reached): until it is, a key this index does not know may have been taken. Empty while it reads on.
     */
    public Optional<SchemaRegistryException> waitingFor() {
        return reader == null ? Optional.empty() : reader.waitingFor();
    }

    /** A turn some gateway put on the topic, whether or not it has started. */
    public Optional<Requested> requested(String turnId) {
        synchronized (taken) {
            return Optional.ofNullable(requested.get(turnId));
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
