package io.turnstream.cluster;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Follows one topic from its beginning with a {@code read_committed} consumer on a thread of its own, as
 * a client of the pipeline would (records of aborted transactions never show), keeps every record, and
 * notes per key when each record was written (its timestamp: the topology's emit time on
 * {@code llm.upserts}, the gateway's send time on {@code llm.raw-events}) and when it was read. So a
 * fault's takeover counts only what was written after the fault, not a backlog read late. The read times
 * include this reader's own lag: a takeover measured here is an upper bound.
 */
public final class TopicFollower implements AutoCloseable {

    /** What a fault did to the keys in flight: when each was written to again, and which had ended before it. */
    public record Takeover(Map<String, Duration> streamedAgain, Set<String> endedBefore) {

        public int resolved() {
            return streamedAgain.size() + endedBefore.size();
        }

        public Duration longest() {
            return streamedAgain.values().stream().max(Duration::compareTo).orElse(Duration.ZERO);
        }

        /** The key that waited longest, to follow it through the services' logs; empty when none streamed again. */
        public String slowest() {
            return streamedAgain.entrySet().stream().max(Map.Entry.comparingByValue()).map(Map.Entry::getKey)
                    .orElse("");
        }

        /** Those of {@code keys} neither written to again nor ended before. */
        public List<String> unresolved(List<String> keys) {
            return keys.stream().filter(k -> !streamedAgain.containsKey(k) && !endedBefore.contains(k)).toList();
        }

        public Duration median() {
            List<Duration> sorted = streamedAgain.values().stream().sorted().toList();
            return sorted.isEmpty() ? Duration.ZERO : sorted.get(sorted.size() / 2);
        }

        /** Per key, whichever of the two takeovers (of two topics with the same keys) wrote to it again first. */
        public Takeover earliest(Takeover other) {
            Map<String, Duration> again = new HashMap<>(streamedAgain);
            other.streamedAgain.forEach((key, after) -> again.merge(key, after, (a, b) -> a.compareTo(b) <= 0 ? a : b));
            Set<String> ended = new HashSet<>(endedBefore);
            ended.addAll(other.endedBefore);
            ended.removeAll(again.keySet());
            return new Takeover(again, ended);
        }
    }

    /** When a record was written (its timestamp, ms) and read ({@link System#nanoTime()}). */
    public record Sighting(long writtenMillis, long readNanos) {
    }

    private final String bootstrapServers;
    private final String topic;
    private final Predicate<ConsumerRecord<String, String>> last;
    private final List<ConsumerRecord<String, String>> records = new ArrayList<>();
    private final Map<String, List<Sighting>> sightings = new ConcurrentHashMap<>();
    private final Map<String, Long> endedAt = new ConcurrentHashMap<>();
    private final Map<TopicPartition, Long> positions = new ConcurrentHashMap<>();
    private final Map<String, Integer> partitionOf = new ConcurrentHashMap<>();
    private final Thread thread;
    private volatile boolean running = true;
    private volatile RuntimeException failure;

    /** @param last whether a record is its key's last (the turn ended) */
    public TopicFollower(String bootstrapServers, String topic, Predicate<ConsumerRecord<String, String>> last) {
        this.bootstrapServers = bootstrapServers;
        this.topic = topic;
        this.last = last;
        this.thread = new Thread(this::follow, "follow-" + topic);
        thread.setDaemon(true);
        thread.start();
    }

    private static KafkaConsumer<String, String> consumer(String bootstrapServers) {
        return new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class));
    }

    private List<TopicPartition> partitions(KafkaConsumer<String, String> consumer) {
        return consumer.partitionsFor(topic).stream().map(p -> new TopicPartition(topic, p.partition())).toList();
    }

    private void follow() {
        try (KafkaConsumer<String, String> consumer = consumer(bootstrapServers)) {
            List<TopicPartition> partitions = partitions(consumer);
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            while (running) {
                List<ConsumerRecord<String, String>> read = new ArrayList<>();
                consumer.poll(Duration.ofMillis(200)).forEach(read::add);
                long now = System.nanoTime();
                for (ConsumerRecord<String, String> record : read) {
                    List<Sighting> times = sightings.computeIfAbsent(record.key(), k -> new ArrayList<>());
                    synchronized (times) {
                        times.add(new Sighting(record.timestamp(), now));
                    }
                    partitionOf.putIfAbsent(record.key(), record.partition());
                    if (last.test(record)) {
                        endedAt.put(record.key(), record.timestamp());
                    }
                }
                synchronized (records) {
                    records.addAll(read);
                }
                partitions.forEach(p -> positions.put(p, consumer.position(p)));
            }
        } catch (RuntimeException e) {
            failure = e;
        }
    }

    /** Everything read so far, in the order read. */
    public List<ConsumerRecord<String, String>> records() {
        check();
        synchronized (records) {
            return List.copyOf(records);
        }
    }

    /**
     * Waits until everything committed when called (each partition's last stable offset) has been read,
     * and returns everything read so far.
     */
    public List<ConsumerRecord<String, String>> readToEnd(Duration bound) throws Exception {
        Map<TopicPartition, Long> end;
        try (KafkaConsumer<String, String> probe = consumer(bootstrapServers)) {
            end = probe.endOffsets(partitions(probe), bound);
        }
        Waits.until("the end of " + topic + " read (" + end + ")", bound, Duration.ofMillis(50), () -> {
            check();
            return end.entrySet().stream().allMatch(e -> positions.getOrDefault(e.getKey(), 0L) >= e.getValue());
        }, done -> done);
        return records();
    }

    public boolean hasStreamed(String key) {
        return sightings.containsKey(key);
    }

    /** Keys of {@code keys} whose last record has not been read yet. */
    public List<String> inFlight(List<String> keys) {
        check();
        return keys.stream().filter(k -> !endedAt.containsKey(k)).toList();
    }

    /** The partition of {@code key}'s records (the default partitioner's), or null when none was read yet. */
    public Integer partition(String key) {
        return partitionOf.get(key);
    }

    /** When each record of {@code key} was written and read, in the order read. */
    public List<Sighting> sightings(String key) {
        List<Sighting> times = sightings.getOrDefault(key, List.of());
        synchronized (times) {
            return List.copyOf(times);
        }
    }

    /** A record and when it was read ({@link System#nanoTime()}). */
    public record Seen(ConsumerRecord<String, String> record, long readNanos) {
    }

    /** Every record of {@code key} read so far and when each was read, in the order read. */
    public List<Seen> seen(String key) {
        List<Sighting> times = sightings(key);
        List<ConsumerRecord<String, String>> mine = records().stream().filter(r -> key.equals(r.key())).toList();
        List<Seen> seen = new ArrayList<>();
        for (int i = 0; i < Math.min(times.size(), mine.size()); i++) {
            seen.add(new Seen(mine.get(i), times.get(i).readNanos()));
        }
        return seen;
    }

    /**
     * What was read of {@code keys} (at most {@code most} of them), for a failure message: how many records
     * of each, and when the last was written.
     */
    public String describe(List<String> keys, int most) {
        StringBuilder text = new StringBuilder();
        for (String key : keys.subList(0, Math.min(most, keys.size()))) {
            List<Sighting> times = sightings(key);
            text.append(text.isEmpty() ? "" : "; ").append(key).append(": ").append(times.isEmpty() ? "nothing read"
                    : times.size() + " record(s) read, the last written at "
                    + Instant.ofEpochMilli(times.get(times.size() - 1).writtenMillis()));
        }
        return keys.size() > most ? text + "; and " + (keys.size() - most) + " more" : text.toString();
    }

    /**
     * For each of {@code keys}: how long after {@code sinceNanos} the first record written at or
     * after {@code sinceMillis} (the same moment on the wall clock) was read; or that its last record
     * was written before then.
     */
    public Takeover since(long sinceMillis, long sinceNanos, List<String> keys) {
        check();
        Map<String, Duration> again = new HashMap<>();
        Set<String> endedBefore = new HashSet<>();
        for (String key : keys) {
            Long ended = endedAt.get(key);
            if (ended != null && ended < sinceMillis) {
                endedBefore.add(key);
                continue;
            }
            sightings(key).stream().filter(s -> s.writtenMillis() >= sinceMillis).findFirst()
                    .ifPresent(s -> again.put(key, Duration.ofNanos(Math.max(0, s.readNanos() - sinceNanos))));
        }
        return new Takeover(again, endedBefore);
    }

    private void check() {
        if (failure != null) {
            throw new IllegalStateException("reading " + topic + " failed", failure);
        }
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.join(Duration.ofSeconds(10).toMillis());
    }
}
