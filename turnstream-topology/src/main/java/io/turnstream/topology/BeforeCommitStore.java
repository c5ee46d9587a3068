package io.turnstream.topology;

import java.util.List;
import java.util.Map;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.internals.WrappedStateStore;

/**
 * A store's outermost layer that runs an action just before each task commit writes the store. A
 * processor has no hook before a commit, but a store has: {@code StreamTask.prepareCommit} flushes
 * every store's record cache ({@code ProcessorStateManager.flushCache}) before it flushes the producer
 * and commits the transaction, on every commit, a clean close's included (Kafka Streams 4.3.1). What
 * the action writes there goes to the store's changelog in the same transaction as the input offsets
 * it follows from; a crash before the commit aborts both, and the input is read again.
 *
 * <p>Like {@link ItemBuffer}'s flush listener before it, this relies on Kafka Streams' internal
 * {@code WrappedStateStore} ({@code flushCache}); all Kafka artifacts are pinned to one version, and the
 * topology tests (TopologyTestDriver commits after every record) and the broker tests check the result.
 */
final class BeforeCommitStore extends WrappedStateStore<KeyValueStore<Bytes, byte[]>, Bytes, byte[]>
        implements KeyValueStore<Bytes, byte[]> {

    private Runnable beforeCommit = () -> {
    };

    private BeforeCommitStore(KeyValueStore<Bytes, byte[]> wrapped) {
        super(wrapped);
    }

    /** The store of {@code inner}, wrapped. */
    static StoreBuilder<KeyValueStore<Bytes, byte[]>> builder(StoreBuilder<KeyValueStore<Bytes, byte[]>> inner) {
        return new Builder(inner);
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
    public void put(Bytes key, byte[] value) {
        wrapped().put(key, value);
    }

    @Override
    public byte[] putIfAbsent(Bytes key, byte[] value) {
        return wrapped().putIfAbsent(key, value);
    }

    @Override
    public void putAll(List<KeyValue<Bytes, byte[]>> entries) {
        wrapped().putAll(entries);
    }

    @Override
    public byte[] delete(Bytes key) {
        return wrapped().delete(key);
    }

    @Override
    public byte[] get(Bytes key) {
        return wrapped().get(key);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> range(Bytes from, Bytes to) {
        return wrapped().range(from, to);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> reverseRange(Bytes from, Bytes to) {
        return wrapped().reverseRange(from, to);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> all() {
        return wrapped().all();
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> reverseAll() {
        return wrapped().reverseAll();
    }

    @Override
    public <PS extends Serializer<P>, P> KeyValueIterator<Bytes, byte[]> prefixScan(P prefix, PS prefixKeySerializer) {
        return wrapped().prefixScan(prefix, prefixKeySerializer);
    }

    @Override
    public long approximateNumEntries() {
        return wrapped().approximateNumEntries();
    }

    private record Builder(StoreBuilder<KeyValueStore<Bytes, byte[]>> inner)
            implements StoreBuilder<KeyValueStore<Bytes, byte[]>> {

        @Override
        public StoreBuilder<KeyValueStore<Bytes, byte[]>> withCachingEnabled() {
            return new Builder(inner.withCachingEnabled());
        }

        @Override
        public StoreBuilder<KeyValueStore<Bytes, byte[]>> withCachingDisabled() {
            return new Builder(inner.withCachingDisabled());
        }

        @Override
        public StoreBuilder<KeyValueStore<Bytes, byte[]>> withLoggingEnabled(Map<String, String> config) {
            return new Builder(inner.withLoggingEnabled(config));
        }

        @Override
        public StoreBuilder<KeyValueStore<Bytes, byte[]>> withLoggingDisabled() {
            return new Builder(inner.withLoggingDisabled());
        }

        @Override
        public KeyValueStore<Bytes, byte[]> build() {
            return new BeforeCommitStore(inner.build());
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
