package io.turnstream.gateway.view;

import io.turnstream.model.ScopedIds;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UpsertEnvelope;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The latest turn of each thread, from the lifecycle events every gateway reads ({@code llm.upserts}
 * live, {@code llm.item-state} at start), so a chat can be resumed on any instance. A thread's turns
 * run one after another; the one whose lifecycle event is newest is the latest. Threads are keyed by
 * tenant ({@link ScopedIds#threadKey}): a tenant that names its thread as another tenant's did gets its own.
 */
final class ThreadTurns {

    private record Latest(String turnId, long timestamp) {
    }

    /** tenant's thread key -> its latest turn; the least recently updated thread is evicted first. */
    private final Map<String, Latest> threads;

    ThreadTurns(int maxThreads) {
        this.threads = new LinkedHashMap<>(256, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Latest> eldest) {
                return size() > maxThreads;
            }
        };
    }

    void record(UpsertEnvelope envelope) {
        if (!(envelope.payload() instanceof UITurnEvent event) || event.threadId() == null || event.turnId() == null) {
            return;
        }
        Latest fresh = new Latest(event.turnId(), envelope.timestamp());
        synchronized (threads) {
            threads.merge(ScopedIds.threadKey(event.tenantId(), event.threadId()), fresh, (old, now) ->
                    now.turnId().equals(old.turnId()) || now.timestamp() >= old.timestamp() ? now : old);
        }
    }

    /** @param tenantId null for turns of no tenant */
    Optional<String> latest(String tenantId, String threadId) {
        synchronized (threads) {
            return Optional.ofNullable(threads.get(ScopedIds.threadKey(tenantId, threadId))).map(Latest::turnId);
        }
    }
}
