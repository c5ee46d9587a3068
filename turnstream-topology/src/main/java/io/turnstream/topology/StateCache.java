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
 * An object cache over one of the processor's JSON state stores ({@code turns}, {@code items}), so the
 * hot path reads a turn and an item without deserialising them per event, and writes each changed
 * one once per commit.
 *
 * <p>On a store wrapped in a {@link BeforeCommitStore} (the topology's), a {@link #put} or
 * {@link #delete} is kept in memory and written to the store just before the commit, once per key
 * however often it changed (profiled: serialising the item and the turn into the record cache with
 * every emit, timer and append was the largest state cost of the flood). What is written is the
 * latest value, in the same transaction as the input offsets it follows from; a crash before the
 * commit aborts both, the input is read again, and the task's new processor starts with a new cache.
 * A scan ({@link #forEach}, {@link #withKeyPrefix}) writes what is pending first, so it sees every
 * change. On a store without the hook (unit tests) every change is written at once.
 *
 * <p>The objects it returns are the cached ones: a caller that changes one must {@link #put} it
 * before the record or punctuation ends, as it would to have the change stored at all. It is
 * created in the processor's {@code init()}, after any restore, and never outlives its task. Least
 * recently used entries beyond {@code maxEntries} are evicted (and read back from what is pending,
 * or from the store, when needed again).
 */
final class StateCache<V> {

    private final KeyValueStore<String, V> store;
    private final Map<String, V> objects;
    /** Whether changes wait for the commit; false on a store without the hook. */
    private final boolean deferring;
    /** Changes not written to the store yet, by key; a null value is a deletion. */
    private final Map<String, V> unwritten = new LinkedHashMap<>();

    StateCache(KeyValueStore<String, V> store, int maxEntries) {
        this.store = store;
        this.objects = new LinkedHashMap<>(1024, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, V> eldest) {
                return size() > maxEntries;
            }
        };
        BeforeCommitStore<?, ?> hook = BeforeCommitStore.under(store);
        this.deferring = hook != null;
        if (hook != null) {
            hook.beforeCommit(this::writeChanges);
        }
    }

    V get(String key) {
        V value = objects.get(key);
        if (value == null) {
            value = unwritten.containsKey(key) ? unwritten.get(key) : store.get(key);
            if (value != null) {
                objects.put(key, value);
            }
        }
        return value;
    }

    void put(String key, V value) {
        objects.put(key, value);
        write(key, value);
    }

    /** Deletes by writing null: {@code delete} would also read and deserialise the old value. */
    void delete(String key) {
        objects.remove(key);
        write(key, null);
    }

    private void write(String key, V value) {
        if (deferring) {
            unwritten.put(key, value);
        } else {
            store.put(key, value);
        }
    }

    /** Writes every pending change to the store; runs just before each commit, and before a scan. */
    void writeChanges() {
        if (!unwritten.isEmpty()) {
            unwritten.forEach(store::put);
            unwritten.clear();
        }
    }

    /** Every key and value in the store, in key order: a full scan, objects from the cache. Iterators are closed. */
    void forEach(BiConsumer<String, V> action) {
        writeChanges();
        try (KeyValueIterator<String, V> it = store.all()) {
            it.forEachRemaining(entry -> action.accept(entry.key, objects.computeIfAbsent(entry.key, key -> entry.value)));
        }
    }

    /** Every value whose key starts with {@code prefix}, in key order: a range scan of the store, objects from the cache. */
    List<V> withKeyPrefix(String prefix) {
        writeChanges();
        List<V> values = new ArrayList<>();
        try (KeyValueIterator<String, V> it = store.prefixScan(prefix, new StringSerializer())) {
            it.forEachRemaining(entry -> values.add(objects.computeIfAbsent(entry.key, key -> entry.value)));
        }
        return values;
    }
}
