package io.turnstream.gateway.ownership;

import io.turnstream.model.ControlMessage;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.ToolResult;
import io.turnstream.model.Topics;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.model.WireFormat;
import io.turnstream.schema.SchemaRegistryException;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The records of the turns one takeover resumes: each topic ({@code llm.raw-events} by run id, {@code llm.control}
 * and {@code llm.tool-results} by turn id) is read once, for every turn, from shortly before the earliest turn was
 * accepted; the records are kept by key and decoded as each turn asks. A takeover of a partition with N unfinished
 * turns reads each partition those turns' keys are on once, not N times. The three topics are read together, each
 * on a thread of its own, when a turn first asks for any of them: a turn asks for them one after the other, and
 * each read (a new consumer, its metadata, the ends, the fetch) took about 0.6 s on a loaded cluster, which the
 * turns waited for in a row before they could call the model again. Asked from the turns' threads, each of which
 * waits only for the reads of the topics it asks for.
 *
 * <p>A record that cannot be decoded for now (on Avro, a schema registry that cannot be reached) is not taken for an
 * unreadable one: the {@link SchemaRegistryException} goes to the turn that asked, which has its partition taken over
 * again after a backoff ({@link TurnPartition#cannotRunNow}); nothing of it is kept, so the next ask decodes again.
 */
final class TakeoverReads implements TurnResumer.TurnLog {

    private static final Logger LOG = LoggerFactory.getLogger(TakeoverReads.class);

    /** Reads the records of some keys of a topic written since a moment: each partition they are on, once. */
    @FunctionalInterface
    interface KeyReads {
        List<ConsumerRecord<String, byte[]>> read(String topic, Set<String> keys, Instant since);
    }

    private final Topics topics;
    private final WireFormat format;
    private final KeyReads reads;
    private final Set<String> runIds = new HashSet<>();
    private final Set<String> turnIds = new HashSet<>();
    private final Instant since;
    /** By topic: its read (by key, what was read), started for every topic at the first ask; guarded by itself. */
    private final Map<String, CompletableFuture<Map<String, List<ConsumerRecord<String, byte[]>>>>> read =
            new HashMap<>();
    /** By run id: its raw events, decoded once for both {@link #rawEvents} and {@link #unreadableRawEvents}. */
    private final Map<String, DecodedRun> decodedRuns = new ConcurrentHashMap<>();

    /** A run's raw events that could be read, and where those are that could not, each with why. */
    private record DecodedRun(List<StreamPayload> events, List<String> unreadable) {
    }

    TakeoverReads(List<TurnRequestRecord> resumed, Topics topics, WireFormat format, KeyReads reads) {
        this.topics = topics;
        this.format = format;
        this.reads = reads;
        resumed.forEach(request -> {
            runIds.add(request.runId());
            turnIds.add(request.turnId());
        });
        this.since = resumed.stream().map(TurnResumer::since).min(Instant::compareTo).orElse(Instant.EPOCH);
    }

    /** Of the run's events: those read since the earliest turn of the takeover, which covers {@code from}. */
    @Override
    public List<StreamPayload> rawEvents(String runId, Instant from) {
        return decodedRun(runId).events();
    }

    @Override
    public List<String> unreadableRawEvents(String runId) {
        return decodedRun(runId).unreadable();
    }

    private DecodedRun decodedRun(String runId) {
        DecodedRun decoded = decodedRuns.get(runId);
        if (decoded != null) {
            return decoded;
        }
        List<ConsumerRecord<String, byte[]>> records = records(topics.rawEvents(), runIds, runId);
        return decodedRuns.computeIfAbsent(runId, run -> {
            List<StreamPayload> events = new ArrayList<>();
            List<String> unreadable = new ArrayList<>();
            for (ConsumerRecord<String, byte[]> record : records) {
                try {
                    events.add(format.read(record.topic(), record.value(), StreamEvent.class).payload());
                } catch (SchemaRegistryException registryDown) {
                    throw registryDown;
                } catch (IOException | RuntimeException e) {
                    warnUnreadable(record, e);
                    unreadable.add(record.topic() + "-" + record.partition() + "@" + record.offset() + " ("
                            + e.getMessage() + ")");
                }
            }
            return new DecodedRun(events, unreadable);
        });
    }

    @Override
    public List<ToolResult> toolResults(String turnId, Instant from) {
        return decodeAll(records(topics.toolResults(), turnIds, turnId), ToolResult.class);
    }

    @Override
    public List<ControlMessage> commands(String turnId, Instant from) {
        return decodeAll(records(topics.control(), turnIds, turnId), ControlMessage.class);
    }

    /**
     * The records of {@code key} on {@code topic}; the first ask starts the read of every topic for all their keys.
     * A read that failed is started again at the next ask of its topic. A turn waits for its topic's read only, and
     * without holding the others up: one that waits for the tool results' read (a turn waiting for tools) does not
     * keep the turns that need only their raw events and cancels from calling the model again.
     */
    private List<ConsumerRecord<String, byte[]>> records(String topic, Set<String> keys, String key) {
        if (!keys.contains(key)) {
            throw new IllegalArgumentException(key + " is not a key of the turns this takeover resumes");
        }
        CompletableFuture<Map<String, List<ConsumerRecord<String, byte[]>>>> topicRead;
        synchronized (read) {
            if (read.isEmpty()) {
                startRead(topics.rawEvents(), runIds);
                startRead(topics.control(), turnIds);
                startRead(topics.toolResults(), turnIds);
            }
            topicRead = read.get(topic);
            if (topicRead == null) {
                topicRead = startRead(topic, keys);
            }
        }
        try {
            return topicRead.join().getOrDefault(key, List.of());
        } catch (CompletionException failed) {
            synchronized (read) {
                read.remove(topic, topicRead);
            }
            throw failed.getCause() instanceof RuntimeException cause ? cause : failed;
        }
    }

    private CompletableFuture<Map<String, List<ConsumerRecord<String, byte[]>>>> startRead(String topic,
                                                                                           Set<String> keys) {
        CompletableFuture<Map<String, List<ConsumerRecord<String, byte[]>>>> topicRead = new CompletableFuture<>();
        Thread reader = new Thread(() -> {
            try {
                Map<String, List<ConsumerRecord<String, byte[]>>> byKey = new HashMap<>();
                for (ConsumerRecord<String, byte[]> record : reads.read(topic, keys, since)) {
                    byKey.computeIfAbsent(record.key(), k -> new ArrayList<>()).add(record);
                }
                topicRead.complete(byKey);
            } catch (RuntimeException e) {
                topicRead.completeExceptionally(e);
            }
        }, "turnstream-takeover-read-" + topic);
        reader.setDaemon(true);
        reader.start();
        read.put(topic, topicRead);
        return topicRead;
    }

    private <T> List<T> decodeAll(List<ConsumerRecord<String, byte[]>> records, Class<T> type) {
        List<T> values = new ArrayList<>();
        records.forEach(record -> decode(record, type).ifPresent(values::add));
        return values;
    }

    /**
     * A record that cannot be read is skipped with a warning (a raw event's is reported too: see above).
     *
     * @throws SchemaRegistryException when it cannot be read for now: not skipped
     */
    private <T> Optional<T> decode(ConsumerRecord<String, byte[]> record, Class<T> type) {
        try {
            return Optional.of(format.read(record.topic(), record.value(), type));
        } catch (SchemaRegistryException registryDown) {
            throw registryDown;
        } catch (IOException | RuntimeException e) {
            warnUnreadable(record, e);
            return Optional.empty();
        }
    }

    private static void warnUnreadable(ConsumerRecord<String, byte[]> record, Exception e) {
        LOG.warn("skipped an unreadable record at {}-{}@{}: {}", record.topic(), record.partition(), record.offset(),
                e.getMessage());
    }
}
