package io.turnstream.cluster;

import io.turnstream.runtime.CommittedReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * Follows one of a turn's topics ({@code llm.upserts} keyed by turn id, {@code llm.raw-events} by run
 * id) with a {@code read_committed} reader on a thread of its own, and notes per key when each record
 * was written (its timestamp: the topology's emit time, the gateway's send time) and when it was read.
 * So a fault's takeover counts only what was written after the fault, not a backlog read late. The
 * read times are this reader's (its own lag included): a takeover measured here is an upper bound.
 */
final class TurnProgress implements AutoCloseable {

    /** What a fault did to the turns in flight: when each wrote again, and which had ended before it. */
    record Takeover(Map<String, Duration> streamedAgain, Set<String> endedBefore) {

        int resolved() {
            return streamedAgain.size() + endedBefore.size();
        }

        Duration longest() {
            return streamedAgain.values().stream().max(Duration::compareTo).orElse(Duration.ZERO);
        }
    }

    private record Sighting(long writtenMillis, long readNanos) {
    }

    private final CommittedReader reader;
    private final Predicate<ConsumerRecord<String, String>> last;
    private final Map<String, List<Sighting>> sightings = new ConcurrentHashMap<>();
    private final Map<String, Long> endedAt = new ConcurrentHashMap<>();
    private final Thread thread;
    private volatile int read;
    private volatile boolean running = true;
    private volatile RuntimeException failure;

    /** @param last whether a record is its key's last (the turn ended) */
    TurnProgress(CommittedReader reader, Predicate<ConsumerRecord<String, String>> last) {
        this.reader = reader;
        this.last = last;
        this.thread = new Thread(this::follow, "turn-progress");
        thread.setDaemon(true);
        thread.start();
    }

    private void follow() {
        try {
            while (running) {
                List<ConsumerRecord<String, String>> records = reader.poll();
                long now = System.nanoTime();
                for (ConsumerRecord<String, String> record : records.subList(read, records.size())) {
                    List<Sighting> times = sightings.computeIfAbsent(record.key(), k -> new ArrayList<>());
                    synchronized (times) {
                        times.add(new Sighting(record.timestamp(), now));
                    }
                    if (last.test(record)) {
                        endedAt.put(record.key(), record.timestamp());
                    }
                }
                read = records.size();
            }
        } catch (RuntimeException e) {
            failure = e;
        }
    }

    /** Everything read so far, in the order read. */
    List<ConsumerRecord<String, String>> records() {
        check();
        return reader.poll().subList(0, read);
    }

    boolean hasStreamed(String key) {
        return sightings.containsKey(key);
    }

    boolean hasEnded(String key) {
        check();
        return endedAt.containsKey(key);
    }

    /** Keys of {@code keys} whose last record has not been read yet. */
    List<String> inFlight(List<String> keys) {
        check();
        return keys.stream().filter(k -> !endedAt.containsKey(k)).toList();
    }

    /**
     * For each of {@code keys}: how long after {@code sinceNanos} the first record written at or
     * after {@code sinceMillis} (the same moment on the wall clock) was read; or that its last record
     * was written before then.
     */
    Takeover since(long sinceMillis, long sinceNanos, List<String> keys) {
        check();
        Map<String, Duration> again = new HashMap<>();
        Set<String> endedBefore = new HashSet<>();
        for (String key : keys) {
            Long ended = endedAt.get(key);
            if (ended != null && ended < sinceMillis) {
                endedBefore.add(key);
                continue;
            }
            List<Sighting> times = sightings.getOrDefault(key, List.of());
            synchronized (times) {
                times.stream().filter(s -> s.writtenMillis() >= sinceMillis).findFirst()
                        .ifPresent(s -> again.put(key, Duration.ofNanos(Math.max(0, s.readNanos() - sinceNanos))));
            }
        }
        return new Takeover(again, endedBefore);
    }

    private void check() {
        if (failure != null) {
            throw new IllegalStateException("reading the turns' records failed", failure);
        }
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.join(Duration.ofSeconds(10).toMillis());
    }
}
