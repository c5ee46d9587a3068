package io.turnstream.gateway.view;

import io.turnstream.model.UpsertEnvelope;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * One turn's slice of {@code llm.upserts} as this gateway's feed saw it: the last upserts (a bounded
 * replay buffer) and the SSE clients to fan them out to. Every method holds the channel's lock, so a
 * client is either caught up from the buffer or handed the upsert live, never both, never neither.
 */
final class TurnChannel {

    private final int capacity;
    private final ArrayDeque<UpsertEnvelope> buffer = new ArrayDeque<>();
    private final Set<SseSubscriber> subscribers = new HashSet<>();
    /** The highest seq the feed has seen for this turn; 0 before the first. */
    private long lastSeq;

    TurnChannel(int capacity) {
        this.capacity = capacity;
    }

    synchronized void publish(UpsertEnvelope envelope) {
        if (envelope.seq() <= lastSeq) {
            return;
        }
        lastSeq = envelope.seq();
        if (buffer.size() == capacity) {
            buffer.removeFirst();
        }
        buffer.addLast(envelope);
        subscribers.removeIf(SseSubscriber::done);
        subscribers.forEach(s -> s.deliver(envelope));
    }

    /**
     * Hands a new client everything after {@code afterSeq}, then live upserts. When the buffer holds
     * every upsert after {@code afterSeq}, the catch-up is exact; otherwise it is the current state of
     * each item from {@code state} (the item-state view) merged with the buffer.
     */
    synchronized void subscribe(SseSubscriber subscriber, long afterSeq, Collection<UpsertEnvelope> state) {
        subscriber.watermark = afterSeq;
        List<UpsertEnvelope> catchUp = covers(afterSeq) ? List.copyOf(buffer) : TurnSnapshots.latestPerItem(
                TurnSnapshots.concat(state, buffer), lastSeq);
        catchUp.forEach(subscriber::deliver);
        subscriber.watermark = Math.max(subscriber.watermark, lastSeq);
        if (!subscriber.done()) {
            subscribers.add(subscriber);
        }
    }

    /** True when the buffer holds every upsert after {@code afterSeq} the feed has seen. */
    private boolean covers(long afterSeq) {
        return lastSeq > 0 && (afterSeq >= lastSeq || (!buffer.isEmpty() && buffer.getFirst().seq() <= afterSeq + 1));
    }

    synchronized List<UpsertEnvelope> buffered() {
        return new ArrayList<>(buffer);
    }

    synchronized boolean idle() {
        subscribers.removeIf(SseSubscriber::done);
        return subscribers.isEmpty();
    }

    synchronized void heartbeat() {
        subscribers.removeIf(SseSubscriber::done);
        subscribers.forEach(SseSubscriber::heartbeat);
    }
}
