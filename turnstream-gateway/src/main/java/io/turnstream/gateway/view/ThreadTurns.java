package io.turnstream.gateway.view;

import io.turnstream.model.ScopedIds;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UpsertEnvelope;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The turns of each thread and its latest, from the lifecycle events every gateway reads ({@code llm.upserts}
 * live, {@code llm.item-state} at start), so a chat can be resumed on any instance. A thread's turns
 * run one after another; the one whose lifecycle event is newest is the latest. Threads are keyed by
 * tenant ({@link ScopedIds#threadKey}): a tenant that names its thread as another tenant's did gets its own.
 */
final class ThreadTurns {

    private record Latest(String turnId, long timestamp) {
    }

    /** A thread's turns by when their first lifecycle event was written, and its latest. */
    private static final class Thread {
        final Map<String, Long> firstSeen = new LinkedHashMap<>();
        Latest latest;
    }

    /** How many turns a thread lists; the earliest are forgotten first. */
    private static final int MAX_TURNS_PER_THREAD = 1_000;

    /** tenant's thread key -> its turns; the least recently updated thread is evicted first. */
    private final Map<String, Thread> threads;

    ThreadTurns(int maxThreads) {
        this.threads = new LinkedHashMap<>(256, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Thread> eldest) {
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
            Thread thread = threads.computeIfAbsent(ScopedIds.threadKey(event.tenantId(), event.threadId()),
                    key -> new Thread());
            thread.firstSeen.merge(event.turnId(), envelope.timestamp(), Math::min);
            if (thread.firstSeen.size() > MAX_TURNS_PER_THREAD) {
                thread.firstSeen.entrySet().stream().min(Map.Entry.comparingByValue())
                        .ifPresent(earliest -> thread.firstSeen.remove(earliest.getKey()));
            }
            Latest old = thread.latest;
            if (old == null || fresh.turnId().equals(old.turnId()) || fresh.timestamp() >= old.timestamp()) {
                thread.latest = fresh;
            }
        }
    }

    /** @param tenantId null for turns of no tenant */
    Optional<String> latest(String tenantId, String threadId) {
        synchronized (threads) {
            return Optional.ofNullable(threads.get(ScopedIds.threadKey(tenantId, threadId)))
                    .map(thread -> thread.latest.turnId());
        }
    }

    /** When the thread's earliest known turn was first seen (epoch ms); empty when none is known. */
    Optional<Long> since(String tenantId, String threadId) {
        synchronized (threads) {
            Thread thread = threads.get(ScopedIds.threadKey(tenantId, threadId));
            return thread == null ? Optional.empty() : thread.firstSeen.values().stream().min(Long::compare);
        }
    }

    /** The thread's turns, earliest first; empty when none is known. */
    List<String> turns(String tenantId, String threadId) {
        synchronized (threads) {
            Thread thread = threads.get(ScopedIds.threadKey(tenantId, threadId));
            return thread == null ? List.of() : thread.firstSeen.entrySet().stream()
                    .sorted(Map.Entry.comparingByValue()).map(Map.Entry::getKey).toList();
        }
    }
}
