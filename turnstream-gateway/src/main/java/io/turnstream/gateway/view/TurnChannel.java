package io.turnstream.gateway.view;

import io.turnstream.model.ChangeType;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UpsertEnvelope;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One turn's slice of {@code llm.upserts} and {@code llm.item-appends} as this gateway's feed saw it:
 * the last events of both streams in arrival order (a bounded replay buffer) and the SSE clients to
 * fan them out to. Every method holds the channel's lock, so a client is either caught up from the
 * buffer or handed an event live, never both, never neither.
 */
final class TurnChannel {

    /** What the channel has seen of one of its two streams. */
    private static final class StreamSeen {
        /** The first and the highest seq seen; 0 before any. */
        long first;
        long last;
        /** The highest seq dropped from the buffer; 0 while nothing was. */
        long evicted;

        boolean accept(long seq) {
            if (seq <= last) {
                return false;
            }
            if (first == 0) {
                first = seq;
            }
            last = seq;
            return true;
        }

        /** True when the buffer holds every event after {@code afterSeq} (of this stream) seen so far. */
        boolean buffered(long afterSeq) {
            return afterSeq >= last || (first > 0 && first <= afterSeq + 1 && evicted <= afterSeq);
        }
    }

    private final int capacity;
    private final ArrayDeque<LiveEvent> buffer = new ArrayDeque<>();
    private final Set<SseSubscriber> subscribers = new HashSet<>();
    /** Clients whose catch-up waits for the item-state view ({@link #subscribe}): handed nothing yet, live or not. */
    private final Set<SseSubscriber> awaitingCatchUp = new HashSet<>();
    private final StreamSeen upserts = new StreamSeen();
    private final StreamSeen appends = new StreamSeen();
    /**
     * Per item whose upserts left the buffer, the seq of the latest that did, and whether it withdrew the item: what a
     * snapshot needs from the item-state view ({@link #heldWith}). A few bytes per item, not its content.
     */
    private final Map<String, Evicted> evictedItems = new HashMap<>();

    private record Evicted(long seq, boolean withdrawn) {
    }

    TurnChannel(int capacity) {
        this.capacity = capacity;
    }

    synchronized void publish(LiveEvent event) {
        if (!seen(event).accept(event.seq())) {
            return;
        }
        if (buffer.size() == capacity) {
            LiveEvent dropped = buffer.removeFirst();
            seen(dropped).evicted = dropped.seq();
            if (dropped instanceof LiveEvent.Upsert upsert && upsert.envelope().payload() instanceof UIUpsert item) {
                evictedItems.put(item.itemId(), new Evicted(dropped.seq(), item.changeType() == ChangeType.WITHDRAWN));
            }
        }
        buffer.addLast(event);
        subscribers.removeIf(SseSubscriber::done);
        subscribers.forEach(s -> s.deliver(event));
    }

    private StreamSeen seen(LiveEvent event) {
        return event instanceof LiveEvent.Upsert ? upserts : appends;
    }

    /**
     * Hands a new client everything after {@code from}, then live events. When the buffer holds every
     * upsert after {@code from}, the catch-up is exact (both streams in arrival order); otherwise it is
     * the current state of each item from {@code state} (the item-state view) merged with the buffer,
     * then the buffered appends the client lacks (a client following the append rule skips what the
     * state already covers). That catch-up waits while {@code state} lacks an item after {@code from} that left
     * the buffer ({@link #heldWith}), unless {@code anyway}: the client is handed nothing, not even live events
     * (which the buffer keeps), and false is returned, for the caller to try again once the view has read more.
     * True once the client is caught up (or gone): under this lock, so every event the feed reads is either in its
     * catch-up or handed to it live after it, once and in order.
     */
    synchronized boolean subscribe(SseSubscriber subscriber, StreamPosition from, Collection<UpsertEnvelope> state,
                                   boolean anyway) {
        boolean exact = upserts.last > 0 && upserts.buffered(from.upsertSeq());
        if (!subscriber.done() && !exact && !anyway && !heldWith(state, from.upsertSeq())) {
            awaitingCatchUp.add(subscriber);
            return false;
        }
        awaitingCatchUp.remove(subscriber);
        subscriber.position = from;
        if (exact) {
            buffer.forEach(subscriber::deliver);
        } else {
            TurnSnapshots.latestPerItem(TurnSnapshots.concat(state, bufferedUpserts()), upserts.last).stream()
                    .map(LiveEvent.Upsert::new).forEach(subscriber::deliver);
            buffer.stream().filter(LiveEvent.Append.class::isInstance).forEach(subscriber::deliver);
        }
        subscriber.position = new StreamPosition(Math.max(subscriber.position.upsertSeq(), upserts.last),
                Math.max(subscriber.position.appendSeq(), appends.last));
        if (!subscriber.done()) {
            subscribers.add(subscriber);
        }
        return true;
    }

    synchronized List<UpsertEnvelope> bufferedUpserts() {
        List<UpsertEnvelope> envelopes = new ArrayList<>();
        for (LiveEvent event : buffer) {
            if (event instanceof LiveEvent.Upsert upsert) {
                envelopes.add(upsert.envelope());
            }
        }
        return envelopes;
    }

    /**
     * Whether {@code state} (the item-state view's entries of the turn) and the buffer together hold the latest upsert
     * of every item the feed read after {@code afterSeq}: each item whose upserts left the buffer, the latest of them
     * after {@code afterSeq}, is in {@code state} at least as far as the feed read it (or, withdrawn, no longer there).
     * The item-state view reads on its own and may lag the feed. True when the feed did not read the turn from its
     * first upsert: it cannot tell what came before.
     */
    synchronized boolean heldWith(Collection<UpsertEnvelope> state, long afterSeq) {
        if (evictedItems.isEmpty() || upserts.first != 1) {
            return true;
        }
        Map<String, Long> latest = new HashMap<>();
        for (UpsertEnvelope envelope : TurnSnapshots.concat(state, bufferedUpserts())) {
            if (envelope.payload() instanceof UIUpsert item) {
                latest.merge(item.itemId(), envelope.seq(), Math::max);
            }
        }
        return evictedItems.entrySet().stream().filter(item -> item.getValue().seq() > afterSeq).allMatch(item -> {
            long held = latest.getOrDefault(item.getKey(), 0L);
            return held >= item.getValue().seq() || item.getValue().withdrawn() && held == 0;
        });
    }

    /** The seqs of the last upsert and the last append of the turn the feed has read; 0 for none. */
    synchronized StreamPosition seen() {
        return new StreamPosition(upserts.last, appends.last);
    }

    synchronized boolean idle() {
        subscribers.removeIf(SseSubscriber::done);
        awaitingCatchUp.removeIf(SseSubscriber::done);
        return subscribers.isEmpty() && awaitingCatchUp.isEmpty();
    }

    /**
     * The SSE clients the channel still holds, caught up or waiting to be (a client is let go at the next event or
     * heartbeat after it is done).
     */
    synchronized int subscribers() {
        return subscribers.size() + awaitingCatchUp.size();
    }

    synchronized void heartbeat() {
        subscribers.removeIf(SseSubscriber::done);
        awaitingCatchUp.removeIf(SseSubscriber::done);
        subscribers.forEach(SseSubscriber::heartbeat);
    }
}
