package io.turnstream.gateway.view;

import io.javalin.http.sse.SseClient;
import io.turnstream.model.Json;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UpsertEnvelope;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One SSE client of one turn. The feed thread only queues; a shared sender pool writes, so a slow
 * client never holds up the feed or other clients. A client that falls {@code maxQueued} upserts
 * behind is disconnected: it reconnects with {@code Last-Event-ID} and resumes. The stream ends after
 * the turn's terminal event.
 */
final class SseSubscriber {

    /** A queued line: an upsert, or a heartbeat comment when {@code envelope} is null. */
    private record Outgoing(UpsertEnvelope envelope) {
    }

    private static final Outgoing HEARTBEAT = new Outgoing(null);

    private final SseClient client;
    private final Executor sender;
    private final int maxQueued;
    private final Queue<Outgoing> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger queued = new AtomicInteger();
    private final AtomicBoolean draining = new AtomicBoolean();
    private volatile boolean done;
    /** The highest seq queued for this client; guarded by the turn's channel. */
    long watermark;

    SseSubscriber(SseClient client, Executor sender, int maxQueued) {
        this.client = client;
        this.sender = sender;
        this.maxQueued = maxQueued;
    }

    /** Queues an upsert unless the client already has it; called under the turn channel's lock. */
    void deliver(UpsertEnvelope envelope) {
        if (envelope.seq() <= watermark || done) {
            return;
        }
        watermark = envelope.seq();
        if (queued.incrementAndGet() > maxQueued) {
            done = true;
            sender.execute(client::close);
            return;
        }
        queue.add(new Outgoing(envelope));
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
                if (done()) {
                    continue;
                }
                write(next);
            }
            draining.set(false);
            if (queue.isEmpty() || !draining.compareAndSet(false, true)) {
                return;
            }
        }
    }

    private void write(Outgoing next) {
        if (next.envelope() == null) {
            client.sendComment("keep-alive");
            return;
        }
        client.sendData(Json.toString(next.envelope()), String.valueOf(next.envelope().seq()));
        if (isTerminal(next.envelope())) {
            done = true;
            client.close();
        }
    }

    static boolean isTerminal(UpsertEnvelope envelope) {
        return envelope.payload() instanceof UITurnEvent event && !UITurnEvent.TURN_STARTED.equals(event.type());
    }
}
