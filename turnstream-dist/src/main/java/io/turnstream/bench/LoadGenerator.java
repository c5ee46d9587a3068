package io.turnstream.bench;

import io.turnstream.model.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * Keeps a fixed number of simulated turns streaming into a raw-events topic, keyed by run id as the
 * gateway does. Paced, every event is sent at its intended time (turn start plus its slot times
 * the delta interval); when the sender falls behind it sends at full speed until it catches up and
 * the delay shows in the measured latency, since latency counts from the intended time. A finished
 * turn is replaced by a new one starting at the finished one's intended end, so the offered load
 * does not depend on how fast anything runs. Unpaced (flood), events go out as fast as the
 * producer takes them.
 */
final class LoadGenerator implements AutoCloseable {

    private final Producer<String, byte[]> producer;
    private final String topic;
    private final BenchConfig config;
    private final String prefix;
    private final LatencyTracker tracker;
    private final boolean paced;
    private final Random random;
    private final PriorityQueue<Open> open = new PriorityQueue<>();
    private final AtomicLong sent = new AtomicLong();
    private final AtomicReference<Exception> failure = new AtomicReference<>();
    private final Callback onSent = (metadata, e) -> {
        if (e != null) {
            failure.compareAndSet(null, e);
        }
    };
    private int turnsStarted;
    private volatile boolean running = true;
    private volatile long lagNanos;
    private Thread thread;

    /** One open turn and the index of its next event. */
    private final class Open implements Comparable<Open> {
        final SimulatedTurn turn;
        int next;

        Open(SimulatedTurn turn) {
            this.turn = turn;
        }

        long dueNanos() {
            return turn.startNanos + turn.slot(next) * config.deltaIntervalNanos();
        }

        @Override
        public int compareTo(Open other) {
            return Long.compare(dueNanos(), other.dueNanos());
        }
    }

    private LoadGenerator(Producer<String, byte[]> producer, String topic, BenchConfig config, String prefix,
                          LatencyTracker tracker, boolean paced) {
        this.producer = producer;
        this.topic = topic;
        this.config = config;
        this.prefix = prefix;
        this.tracker = tracker;
        this.paced = paced;
        this.random = new Random(config.seed() ^ prefix.hashCode());
    }

    /** Starts {@code turns} paced turns, staggered over the first second, on a thread of their own. */
    static LoadGenerator paced(Producer<String, byte[]> producer, String topic, BenchConfig config, String prefix,
                               int turns, LatencyTracker tracker) {
        LoadGenerator load = new LoadGenerator(producer, topic, config, prefix, tracker, true);
        long now = System.nanoTime();
        for (int i = 0; i < turns; i++) {
            load.openTurn(now + i * 1_000_000_000L / turns);
        }
        load.thread = new Thread(load::runPaced, "bench-load-" + prefix);
        load.thread.setDaemon(true);
        load.thread.start();
        return load;
    }

    /** What a flood sent. */
    record Sent(int turns, long events) {
    }

    /**
     * Sends at least {@code events} events of {@code concurrency} interleaved turns as fast as
     * possible, then closes the open turns; throws when any event was not written.
     */
    static Sent flood(Producer<String, byte[]> producer, String topic, BenchConfig config, String prefix,
                     int concurrency, long events) {
        LoadGenerator load = new LoadGenerator(producer, topic, config, prefix, null, false);
        for (int i = 0; i < concurrency; i++) {
            load.openTurn(0);
        }
        while (load.sent.get() < events) {
            load.sendNext();
        }
        load.closeOpenTurns();
        load.throwIfFailed();
        return new Sent(load.turnsStarted, load.sent.get());
    }

    private void runPaced() {
        while (running && failure.get() == null) {
            long wait = open.peek().dueNanos() - System.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(Math.min(wait, 1_000_000));
                continue;
            }
            lagNanos = -wait;
            sendNext();
        }
    }

    private void sendNext() {
        Open head = open.poll();
        SimulatedTurn turn = head.turn;
        producer.send(new ProducerRecord<>(topic, turn.runId, Json.toBytes(turn.event(head.next))), onSent);
        sent.incrementAndGet();
        if (turn.isLast(head.next)) {
            openTurn(head.dueNanos());
        } else {
            head.next++;
            open.add(head);
        }
    }

    private void openTurn(long startNanos) {
        SimulatedTurn turn = new SimulatedTurn(prefix + "-" + turnsStarted++, between(config.reasoningTokens()),
                between(config.messageTokens()), config.tokensPerDelta(), startNanos);
        if (tracker != null) {
            tracker.register(turn);
        }
        open.add(new Open(turn));
    }

    private int between(BenchConfig.Range range) {
        return range.min() + random.nextInt(range.max() - range.min() + 1);
    }

    long sent() {
        return sent.get();
    }

    /** How late the last event left against its intended time. */
    long lagNanos() {
        return lagNanos;
    }

    /** Stops pacing and ends every open turn with its response_done, as a gateway shutting down would. */
    @Override
    public void close() throws InterruptedException {
        running = false;
        if (thread != null) {
            thread.join();
        }
        closeOpenTurns();
        throwIfFailed();
    }

    private void throwIfFailed() {
        Exception failed = failure.get();
        if (failed != null) {
            throw new IllegalStateException("the load producer failed: " + failed.getMessage(), failed);
        }
    }

    private void closeOpenTurns() {
        List<Open> remaining = new ArrayList<>(open);
        open.clear();
        for (Open turn : remaining) {
            if (turn.next == 0 && tracker != null) {
                tracker.forget(turn.turn.runId);
            } else if (turn.next > 0) {
                int last = turn.turn.size() - 1;
                producer.send(new ProducerRecord<>(topic, turn.turn.runId, Json.toBytes(turn.turn.event(last))), onSent);
                sent.incrementAndGet();
            }
        }
        producer.flush();
    }
}
