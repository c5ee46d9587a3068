package io.turnstream.gateway.view;

import io.turnstream.gateway.http.EventStream;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One SSE client of one turn. The feed thread only queues, into this client's bounded queue; a small
 * shared sender pool encodes the queue through the client's {@link LiveEncoder}, one drain per client at
 * a time, and only while the client's {@link EventStream} has taken everything before (its writes never
 * block). So a client that stops reading holds its queue and one encoded event, never a thread: the other
 * clients' streams go on. A client that falls {@code maxQueued} events behind gets a final event saying so
 * ({@link LiveEncoder#fellBehind}) and is closed: it reconnects with {@code Last-Event-ID} and resumes.
 * The stream ends after the turn's terminal event.
 */
final class SseSubscriber {

    /** A queued line: the stream's opening, a live event, or a heartbeat comment. */
    private record Outgoing(LiveEvent event, StreamPosition position, boolean opening) {
    }

    private static final Logger LOG = LoggerFactory.getLogger(SseSubscriber.class);
    private static final Outgoing HEARTBEAT = new Outgoing(null, null, false);
    private static final Outgoing OPENING = new Outgoing(null, null, true);
    /** The last line a client that fell behind gets. */
    private static final Outgoing FELL_BEHIND = new Outgoing(null, null, false);

    private final EventStream stream;
    private final LiveEncoder encoder;
    private final Executor sender;
    private final int maxQueued;
    private final Runnable onFellBehind;
    private final Queue<Outgoing> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger queued = new AtomicInteger();
    private final AtomicBoolean draining = new AtomicBoolean();
    private volatile boolean done;
    /** What this client has been handed so far; guarded by the turn's channel. */
    StreamPosition position = StreamPosition.START;

    /** @param onFellBehind runs when this client is closed for falling behind (a metric) */
    SseSubscriber(EventStream stream, LiveEncoder encoder, Executor sender, int maxQueued, Runnable onFellBehind) {
        this.stream = stream;
        this.encoder = encoder;
        this.sender = sender;
        this.maxQueued = maxQueued;
        this.onFellBehind = onFellBehind;
        stream.onWritable(this::schedule);
    }

    /** Queues the encoder's opening lines, before any event: before the turn's channel hands this client anything. */
    void open() {
        queued.incrementAndGet();
        queue.add(OPENING);
        schedule();
    }

    /** Queues an event unless the client already has it; called under the turn channel's lock. */
    void deliver(LiveEvent event) {
        if (position.covers(event) || done) {
            return;
        }
        position = position.after(event);
        if (queued.incrementAndGet() > maxQueued) {
            done = true;
            queue.clear();
            queue.add(FELL_BEHIND);
            onFellBehind.run();
            schedule();
            return;
        }
        queue.add(new Outgoing(event, position, false));
        schedule();
    }

    void heartbeat() {
        if (!done && queued.get() == 0) {
            queued.incrementAndGet();
            queue.add(HEARTBEAT);
            schedule();
        }
    }

    boolean done() {
        return done || stream.terminated();
    }

    private void schedule() {
        if (ready() && draining.compareAndSet(false, true)) {
            try {
                sender.execute(this::drain);
            } catch (RejectedExecutionException shuttingDown) {
                done = true;
                draining.set(false);
            }
        }
    }

    /** Something to encode, and a client that took everything before (the final event goes regardless). */
    private boolean ready() {
        Outgoing next = queue.peek();
        return next != null && (next == FELL_BEHIND || stream.writable() || stream.terminated());
    }

    private void drain() {
        while (true) {
            Outgoing next;
            while (ready() && (next = queue.poll()) != null) {
                queued.decrementAndGet();
                if (next == FELL_BEHIND) {
                    fellBehind();
                    continue;
                }
                if (done()) {
                    continue;
                }
                try {
                    write(next);
                } catch (RuntimeException e) {
                    // a broken encoder ends this stream only; the client may reconnect
                    LOG.warn("closing an SSE stream that failed to encode: {}", e.toString());
                    done = true;
                    stream.close();
                }
            }
            draining.set(false);
            // the stream may have become writable, or an event arrived, after the loop looked
            if (!ready() || !draining.compareAndSet(false, true)) {
                return;
            }
        }
    }

    private void fellBehind() {
        try {
            encoder.fellBehind(stream, "this stream fell more than " + maxQueued + " events behind and is closed;"
                    + " reconnect with Last-Event-ID to resume");
        } finally {
            stream.close();
        }
    }

    private void write(Outgoing next) {
        if (next.opening()) {
            encoder.open(stream);
            return;
        }
        if (next.event() == null) {
            stream.sendComment("keep-alive");
            return;
        }
        encoder.write(next.event(), next.position(), stream);
        if (next.event().isTerminal()) {
            done = true;
            encoder.close(stream);
            stream.close();
        }
    }
}
