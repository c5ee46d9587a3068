package io.turnstream.gateway.view;

import io.javalin.http.sse.SseClient;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One SSE client of one turn. The feed thread only queues, into this client's bounded queue; a sender
 * pool writes through the client's {@link LiveEncoder}, one drain per client at a time. Writes block
 * while a client does not read, so the pool grows a thread per blocked client instead of sharing a few:
 * a client that stops reading holds only its own thread (until Jetty's idle timeout ends its connection),
 * never another client's stream. A client that falls {@code maxQueued} events behind gets a final event
 * saying so ({@link LiveEncoder#fellBehind}) and is closed: it reconnects with {@code Last-Event-ID} and
 * resumes. The stream ends after the turn's terminal event.
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

    private final SseClient client;
    private final LiveEncoder encoder;
    private final Executor sender;
    private final int maxQueued;
    private final Queue<Outgoing> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger queued = new AtomicInteger();
    private final AtomicBoolean draining = new AtomicBoolean();
    private volatile boolean done;
    /** What this client has been handed so far; guarded by the turn's channel. */
    StreamPosition position = StreamPosition.START;

    SseSubscriber(SseClient client, LiveEncoder encoder, Executor sender, int maxQueued) {
        this.client = client;
        this.encoder = encoder;
        this.sender = sender;
        this.maxQueued = maxQueued;
    }

    /** Queues the encoder's opening lines, before any event; called under the turn channel's lock. */
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
        return done || client.terminated();
    }

    private void schedule() {
        if (draining.compareAndSet(false, true)) {
            try {
                sender.execute(this::drain);
            } catch (RejectedExecutionException shuttingDown) {
                done = true;
            }
        }
    }

    private void drain() {
        while (true) {
            Outgoing next;
            while ((next = queue.poll()) != null) {
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
                    // a broken client or encoder ends this stream only; the client may reconnect
                    LOG.warn("closing an SSE stream that failed to write: {}", e.toString());
                    done = true;
                    client.close();
                }
            }
            draining.set(false);
            if (queue.isEmpty() || !draining.compareAndSet(false, true)) {
                return;
            }
        }
    }

    private void fellBehind() {
        try {
            encoder.fellBehind(client, "this stream fell more than " + maxQueued + " events behind and is closed;"
                    + " reconnect with Last-Event-ID to resume");
        } catch (RuntimeException gone) {
            // the client is gone: closing it is all that is left
        } finally {
            client.close();
        }
    }

    private void write(Outgoing next) {
        if (next.opening()) {
            encoder.open(client);
            return;
        }
        if (next.event() == null) {
            client.sendComment("keep-alive");
            return;
        }
        encoder.write(next.event(), next.position(), client);
        if (next.event().isTerminal()) {
            done = true;
            encoder.close(client);
            client.close();
        }
    }
}
