package io.turnstream.gateway.view;

import io.turnstream.model.UpsertEnvelope;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.TopicReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * The gateway's materialised view of the compacted {@code llm.item-state}: the latest upsert of every
 * item (and the lifecycle event) of the most recently updated turns, in memory. Loaded from the
 * beginning of the topic at start, then kept current. Late joiners and snapshots start from it.
 */
final class ItemStateView implements AutoCloseable {

    private final String topic;
    private final WireFormat format;
    /** turn id -> (item-state key -> latest envelope); the least recently updated turn is evicted first. */
    private final Map<String, Map<String, UpsertEnvelope>> turns;
    private final TopicReader reader;
    private final Consumer<UpsertEnvelope> listener;
    private final Consumer<String> turnRead;

    /**
     * @param listener sees every envelope read, on the reader's thread
     * @param turnRead told the turn id after each record of a turn was applied (a tombstone too), on the reader's thread
     */
    ItemStateView(Properties kafkaProperties, String topic, WireFormat format, int maxTurns,
                  Consumer<UpsertEnvelope> listener, Consumer<String> turnRead) {
        this.topic = topic;
        this.format = format;
        this.listener = listener;
        this.turnRead = turnRead;
        this.turns = new LinkedHashMap<>(256, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Map<String, UpsertEnvelope>> eldest) {
                return size() > maxTurns;
            }
        };
        this.reader = new TopicReader("turnstream-gateway-item-state", kafkaProperties, List.of(topic),
                TopicReader.Start.BEGINNING, this::apply);
    }

    /** Completes when the topic's content at start-up is loaded. */
    CompletableFuture<Void> loaded() {
        return reader.caughtUp();
    }

    private void apply(ConsumerRecord<String, byte[]> record) {
        if (record.value() == null) {
            String turnId = record.key() == null ? null : record.key().split("/", 2)[0];
            synchronized (turns) {
                Map<String, UpsertEnvelope> items = turnId == null ? null : turns.get(turnId);
                if (items != null) {
                    items.remove(record.key());
                }
            }
            if (turnId != null) {
                turnRead.accept(turnId);
            }
            return;
        }
        UpsertEnvelope envelope;
        try {
            envelope = format.read(topic, record.value(), UpsertEnvelope.class);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (envelope.turnId() == null || record.key() == null) {
            throw new IllegalArgumentException("an item-state record needs a key and a turnId");
        }
        synchronized (turns) {
            turns.computeIfAbsent(envelope.turnId(), id -> new HashMap<>())
                    .merge(record.key(), envelope, (old, fresh) -> fresh.seq() >= old.seq() ? fresh : old);
        }
        listener.accept(envelope);
        turnRead.accept(envelope.turnId());
    }

    /** The latest envelope of each item of a turn (empty when the turn is unknown). */
    List<UpsertEnvelope> entries(String turnId) {
        synchronized (turns) {
            Map<String, UpsertEnvelope> items = turns.get(turnId);
            return items == null ? List.of() : List.copyOf(items.values());
        }
    }

    boolean healthy() {
        return reader.healthy();
    }

    @Override
    public void close() {
        reader.close();
    }
}
