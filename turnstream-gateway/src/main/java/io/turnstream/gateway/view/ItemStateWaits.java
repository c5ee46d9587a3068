package io.turnstream.gateway.view;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Work on a turn that needs the item-state view to hold the items that left the turn's replay buffer: answering the
 * callers waiting for its end, catching up an SSE client that joins late. The view is read apart from the live feed and
 * may lag it; work built from the two before it holds those items would leave them out. Each piece of work is tried at
 * once, then again after each of the view's reads of its turn ({@link #stateRead}), until it goes through; after a
 * bound ({@link #HELD_WAIT} in the gateway) it goes through with what the views hold, with a WARN. It runs on whichever
 * thread tries it (the caller's, the view's reader, the scheduler), one at a time, and never again once through.
 */
final class ItemStateWaits {

    /** One try of the work; {@code anyway}: go through with what the views hold. True once it went through. */
    interface Attempt {
        boolean tryNow(boolean anyway);
    }

    /** How long work waits for the item-state view to hold the items that left a turn's replay buffer. */
    static final Duration HELD_WAIT = Duration.ofSeconds(10);

    private static final Logger LOG = LoggerFactory.getLogger(ItemStateWaits.class);

    private final Map<String, List<Waiting>> waiting = new ConcurrentHashMap<>();
    private final ScheduledExecutorService scheduler;
    private final Duration bound;

    /** @param bound how long work waits before it goes through anyway, scheduled on {@code scheduler} */
    ItemStateWaits(ScheduledExecutorService scheduler, Duration bound) {
        this.scheduler = scheduler;
        this.bound = bound;
    }

    /** Does the work now if it goes through, else once the item-state view holds what it needs (or at the bound). */
    void run(String turnId, String what, Attempt attempt) {
        Waiting work = new Waiting(attempt);
        if (work.tryNow(false)) {
            return;
        }
        waiting.computeIfAbsent(turnId, id -> new CopyOnWriteArrayList<>()).add(work);
        // registered first, tried again second: a read of the view in between found nothing to try
        if (work.tryNow(false)) {
            forget(turnId, work);
            return;
        }
        scheduler.schedule(() -> {
            if (!work.tryNow(false)) {
                LOG.warn("after {} ms the gateway's item-state view still lacks items that left the replay buffer of "
                        + "turn {}; {} with what the views hold", bound.toMillis(), turnId, what);
                work.tryNow(true);
            }
            forget(turnId, work);
        }, bound.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The item-state view applied a record of the turn: the turn's waiting work may go through now. */
    void stateRead(String turnId) {
        List<Waiting> works = waiting.get(turnId);
        if (works != null) {
            works.stream().filter(work -> work.tryNow(false)).forEach(work -> forget(turnId, work));
        }
    }

    private void forget(String turnId, Waiting work) {
        waiting.computeIfPresent(turnId, (id, works) -> {
            works.remove(work);
            return works.isEmpty() ? null : works;
        });
    }

    /** A piece of work and whether it went through; tried by one thread at a time. */
    private static final class Waiting {
        private final Attempt attempt;
        private boolean through;

        Waiting(Attempt attempt) {
            this.attempt = attempt;
        }

        synchronized boolean tryNow(boolean anyway) {
            if (!through) {
                through = attempt.tryNow(anyway);
            }
            return through;
        }
    }
}
