package io.turnstream.topology;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

class StateCacheTest {

    @Test
    void changesReachTheStoreOnlyBeforeACommitAsTheLatestValuePerKey() {
        KeyValueStore<String, TurnState> store = hookedStore();
        StateCache<TurnState> cache = new StateCache<>(store, 100);
        TurnState first = turn("run-1", 1);
        cache.put("run-1", first);
        first.seq = 2;
        cache.put("run-1", first);
        cache.put("run-2", turn("run-2", 7));
        cache.put("run-3", turn("run-3", 1));
        cache.delete("run-3");
        assertThat(stored(store)).as("nothing written before the commit").isEmpty();
        assertThat(cache.get("run-1").seq).isEqualTo(2);
        assertThat(cache.get("run-3")).as("a pending deletion").isNull();

        commit(store);
        assertThat(stored(store)).as("the latest value of each key; the deleted one never written")
                .isEqualTo(Map.of("run-1", 2L, "run-2", 7L));

        cache.get("run-2").seq = 8;
        cache.put("run-2", cache.get("run-2"));
        cache.delete("run-1");
        commit(store);
        assertThat(stored(store)).as("a change and a deletion after an earlier commit").isEqualTo(Map.of("run-2", 8L));

        StateCache<TurnState> restored = new StateCache<>(wrapped(store), 100);
        assertThat(restored.get("run-2").seq).as("what a restored task reads").isEqualTo(8);
        assertThat(restored.get("run-1")).isNull();
    }

    @Test
    void aChangeEvictedFromTheObjectsIsStillReadAndWritten() {
        KeyValueStore<String, TurnState> store = hookedStore();
        StateCache<TurnState> cache = new StateCache<>(store, 2);
        for (int i = 0; i < 5; i++) {
            cache.put("run-" + i, turn("run-" + i, i + 10));
        }
        cache.delete("run-0");
        for (int i = 1; i < 5; i++) {
            assertThat(cache.get("run-" + i).seq).as("run-%d, evicted from the objects, not yet written", i).isEqualTo(i + 10);
        }
        assertThat(cache.get("run-0")).isNull();
        commit(store);
        assertThat(stored(store)).isEqualTo(Map.of("run-1", 11L, "run-2", 12L, "run-3", 13L, "run-4", 14L));
    }

    @Test
    void aScanSeesEveryChangeMadeSinceTheCommit() {
        KeyValueStore<String, TurnState> store = hookedStore();
        StateCache<TurnState> cache = new StateCache<>(store, 100);
        cache.put("a\u0000one", turn("a", 1));
        commit(store);
        cache.put("a\u0000two", turn("a", 2));
        cache.put("b\u0000one", turn("b", 3));
        cache.delete("a\u0000one");

        assertThat(cache.withKeyPrefix("a\u0000")).extracting(turn -> turn.seq).containsExactly(2L);
        List<String> keys = new ArrayList<>();
        cache.forEach((key, turn) -> keys.add(key));
        assertThat(keys).containsExactly("a\u0000two", "b\u0000one");
    }

    @Test
    void withoutTheHookEveryChangeIsWrittenAtOnce() {
        KeyValueStore<String, TurnState> store = init(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("turns"),
                Serdes.String(), StateSerde.of(TurnState.class)).withLoggingDisabled().build());
        StateCache<TurnState> cache = new StateCache<>(store, 100);
        cache.put("run-1", turn("run-1", 4));
        assertThat(stored(store)).isEqualTo(Map.of("run-1", 4L));
        cache.delete("run-1");
        assertThat(stored(store)).isEmpty();
    }

    /** The topology's layering: the hook outside a cached store (here in memory, without a changelog). */
    private static KeyValueStore<String, TurnState> hookedStore() {
        return init(BeforeCommitStore.builder(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore("turns"),
                Serdes.String(), StateSerde.of(TurnState.class)).withLoggingDisabled()).build());
    }

    private static KeyValueStore<String, TurnState> init(KeyValueStore<String, TurnState> store) {
        store.init(new MockProcessorContext<>().getStateStoreContext(), store);
        return store;
    }

    /** What Kafka Streams does to each store just before it commits. */
    private static void commit(KeyValueStore<String, TurnState> store) {
        ((BeforeCommitStore<String, TurnState>) store).flushCache();
    }

    /** The store under the hook: what is written, as a restored task would find it. */
    private static KeyValueStore<String, TurnState> wrapped(KeyValueStore<String, TurnState> store) {
        return ((BeforeCommitStore<String, TurnState>) store).wrapped();
    }

    /** Each stored turn's seq, by key, read past the hook. */
    private static Map<String, Long> stored(KeyValueStore<String, TurnState> store) {
        Map<String, Long> seqs = new HashMap<>();
        KeyValueStore<String, TurnState> inner = store instanceof BeforeCommitStore<?, ?> ? wrapped(store) : store;
        try (var it = inner.all()) {
            it.forEachRemaining(entry -> seqs.put(entry.key, entry.value.seq));
        }
        return seqs;
    }

    private static TurnState turn(String runId, long seq) {
        TurnState turn = new TurnState();
        turn.runId = runId;
        turn.turnId = "turn-" + runId;
        turn.seq = seq;
        return turn;
    }
}
