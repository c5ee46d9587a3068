package io.turnstream.topology;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * A write-through object cache over one of the processor's JSON state stores ({@code turns},
 * {@code items}), so the hot path reads a turn and an item without deserialising them per event.
 *
 * <p>The store stays the truth: every change is written to it, and the cache only holds what the
 * store holds, so it can be dropped at any time. It is created in the processor's {@code init()},
 * after any restore, and never outlives its task. The objects it returns are the cached ones: a
 * caller that changes one must {@link #put} it before the record or punctuation ends, as it would
 * to have the change stored at all. Least recently used entries beyond {@code maxEntries} are
 * evicted (and read back from the store when needed again).
 */
final class StateCache<V> {

    private final KeyValueStore<String, V> store;
    private final Map<String, V> objects;

    StateCache(KeyValueStore<String, V> store, int maxEntries) {
        this.store = store;
        this.objects = new LinkedHashMap<>(1024, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, V> eldest) {
                return size() > maxEntries;
            }
        };
    }

    V get(String key) {
        V value = objects.get(key);
        if (value == null) {
            value = store.get(key);
            if (value != null) {
                objects.put(key, value);
            }
        }
        return value;
    }

    void put(String key, V value) {
        store.put(key, value);
        objects.put(key, value);
    }

    /** Deletes by writing null: {@code delete} would also read and deserialise the old value. */
    void delete(String key) {
        store.put(key, null);
        objects.remove(key);
    }

    /** Every key and value in the store, in key order: a full scan, objects from the cache. Iterators are closed. */
    void forEach(BiConsumer<String, V> action) {
        try (KeyValueIterator<String, V> it = store.all()) {
            it.forEachRemaining(entry -> action.accept(entry.key, objects.computeIfAbsent(entry.key, key -> entry.value)));
        }
    }

    /** Every value whose key starts with {@code prefix}, in key order: a range scan of the store, objects from the cache. */
    List<V> withKeyPrefix(String prefix) {
        List<V> values = new ArrayList<>();
        try (KeyValueIterator<String, V> it = store.prefixScan(prefix, new StringSerializer())) {
            it.forEachRemaining(entry -> values.add(objects.computeIfAbsent(entry.key, key -> entry.value)));
        }
        return values;
    }
}
