package io.turnstream.topology;

import java.util.List;
import java.util.Map;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.internals.WrappedStateStore;

/**
 * A store's outermost layer that runs an action just before each task commit writes the store. A
 * processor has no hook before a commit, but a store has: {@code StreamTask.prepareCommit} flushes
 * every store's record cache ({@code ProcessorStateManager.flushCache}) before it flushes the producer
 * and commits the transaction, on every commit, a clean close's included (Kafka Streams 4.3.1 and 4.4.0). What
 * the action writes there goes to the store's changelog in the same transaction as the input offsets
 * it follows from; a crash before the commit aborts both, and the input is read again.
 *
 * <p>Like {@link ItemBuffer}'s flush listener before it, this relies on Kafka Streams' internal
 * {@code WrappedStateStore} ({@code flushCache}); all Kafka artifacts are pinned to one version, and the
 * topology tests (TopologyTestDriver commits after every record) and the broker tests check the result.
 * It wraps the chunk store ({@link ItemBuffer}) and the {@code turns} and {@code items} stores ({@link StateCache}).
 */
final class BeforeCommitStore<K, V> extends WrappedStateStore<KeyValueStore<K, V>, K, V>
        implements KeyValueStore<K, V> {

    private Runnable beforeCommit = () -> {
    };

    private BeforeCommitStore(KeyValueStore<K, V> wrapped) {
        super(wrapped);
    }

    /** The store of {@code inner}, wrapped. */
    static <K, V> StoreBuilder<KeyValueStore<K, V>> builder(StoreBuilder<KeyValueStore<K, V>> inner) {
        return new Builder<>(inner);
    }

    /** The hook under the processor's view of a store (Kafka Streams wraps it), or null when it has none. */
    static BeforeCommitStore<?, ?> under(StateStore store) {
        for (StateStore layer = store; layer instanceof WrappedStateStore<?, ?, ?> wrapped; layer = wrapped.wrapped()) {
            if (layer instanceof BeforeCommitStore<?, ?> hook) {
                return hook;
            }
        }
        return null;
    }

    /** The action to run before each commit (one per store: the task's processor sets it in its init). */
    void beforeCommit(Runnable action) {
        this.beforeCommit = action;
    }

    @Override
    public void flushCache() {
        beforeCommit.run();
        super.flushCache();
    }

    @Override
    public void put(K key, V value) {
        wrapped().put(key, value);
    }

    @Override
    public V putIfAbsent(K key, V value) {
        return wrapped().putIfAbsent(key, value);
    }

    @Override
    public void putAll(List<KeyValue<K, V>> entries) {
        wrapped().putAll(entries);
    }

    @Override
    public V delete(K key) {
        return wrapped().delete(key);
    }

    @Override
    public V get(K key) {
        return wrapped().get(key);
    }

    @Override
    public KeyValueIterator<K, V> range(K from, K to) {
        return wrapped().range(from, to);
    }

    @Override
    public KeyValueIterator<K, V> reverseRange(K from, K to) {
        return wrapped().reverseRange(from, to);
    }

    @Override
    public KeyValueIterator<K, V> all() {
        return wrapped().all();
    }

    @Override
    public KeyValueIterator<K, V> reverseAll() {
        return wrapped().reverseAll();
    }

    @Override
    public <PS extends Serializer<P>, P> KeyValueIterator<K, V> prefixScan(P prefix, PS prefixKeySerializer) {
        return wrapped().prefixScan(prefix, prefixKeySerializer);
    }

    @Override
    public long approximateNumEntries() {
        return wrapped().approximateNumEntries();
    }

    private record Builder<K, V>(StoreBuilder<KeyValueStore<K, V>> inner) implements StoreBuilder<KeyValueStore<K, V>> {

        @Override
        public StoreBuilder<KeyValueStore<K, V>> withCachingEnabled() {
            return new Builder<>(inner.withCachingEnabled());
        }

        @Override
        public StoreBuilder<KeyValueStore<K, V>> withCachingDisabled() {
            return new Builder<>(inner.withCachingDisabled());
        }

        @Override
        public StoreBuilder<KeyValueStore<K, V>> withLoggingEnabled(Map<String, String> config) {
            return new Builder<>(inner.withLoggingEnabled(config));
        }

        @Override
        public StoreBuilder<KeyValueStore<K, V>> withLoggingDisabled() {
            return new Builder<>(inner.withLoggingDisabled());
        }

        @Override
        public KeyValueStore<K, V> build() {
            return new BeforeCommitStore<>(inner.build());
        }

        @Override
        public Map<String, String> logConfig() {
            return inner.logConfig();
        }

        @Override
        public boolean loggingEnabled() {
            return inner.loggingEnabled();
        }

        @Override
        public String name() {
            return inner.name();
        }
    }
}
