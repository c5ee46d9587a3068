package io.turnstream.gateway.ownership;

import io.turnstream.gateway.loop.TurnProgress;
import io.turnstream.gateway.loop.TurnRegistry;
import io.turnstream.model.ControlMessage;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.ToolResult;
import io.turnstream.model.Topics;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.GrouplessConsumer;
import io.turnstream.runtime.TopicReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads what Kafka holds of the turns a takeover resumes, turns other gateways were running: their raw events
 * (key run id, on {@code llm.raw-events}), cancels of them (key turn id, on {@code llm.control}) and the results
 * of their tool calls (key turn id, on {@code llm.tool-results}), each from shortly before the earliest of them
 * was accepted. Each topic's partitions are read once for all the takeover's turns, when a turn first asks, and
 * the records handed out by turn: a takeover of a partition with N unfinished turns reads a partition once, not N
 * times. Reads go through a {@link GrouplessConsumer}, read_committed, up to the high watermark seen when they
 * start, so every transaction open at that moment (a dead owner's, once fenced) has resolved: what was committed is
 * all there, what was aborted is never seen. A transaction still open after {@link #READ_LIMIT} leaves the read
 * with what is committed. A raw event that cannot be read is reported by where it is
 * ({@link TurnLog#unreadableRawEvents}); a cancel or a result that cannot be read is skipped with a warning.
 */
public final class TurnResumer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(TurnResumer.class);
    private static final String CLIENT_ID = "turnstream-gateway-resume";
    /** Records are stamped by the clocks of different machines. */
    private static final Duration CLOCK_SKEW = Duration.ofMinutes(1);
    /** Transactions left open by a dead owner resolve when fenced or at their timeout. */
    private static final Duration READ_LIMIT = Duration.ofSeconds(60);
    private static final Duration TOPIC_WAIT = Duration.ofSeconds(30);

    /** A takeover reads four topics, three of them at once: as many consumers are kept open between reads. */
    static final int KEPT_CONSUMERS = 4;

    private final Topics topics;
    private final WireFormat format;
    private final Admin admin;
    private final Supplier<GrouplessConsumer> consumers;
    /**
     * Read consumers kept open between reads, their metadata and connections to the brokers ready: a new consumer
     * first fetches the metadata, then connects to each leader it reads from, which a takeover waited for before every
     * read (its turns' requests, then their raw events, cancels and tool results).
     */
    private final Deque<GrouplessConsumer> idle = new ArrayDeque<>();
    private boolean closed;

    public TurnResumer(Properties kafkaProperties, Topics topics, WireFormat format) {
        this(topics, format, Admin.create(kafkaProperties), () -> new GrouplessConsumer(CLIENT_ID,
                readProperties(kafkaProperties)));
    }

    /**
     * A kept consumer's last fetch may still wait at the broker when its read ends (up to {@code fetch.max.wait.ms}
     * for data past the end), and a broker answers a connection's requests in order: the next read's first request
     * on that connection waited behind it (477 and 554 ms in two cluster runs, Kafka's default wait being 500 ms).
     * A read up to an end fixed in advance has no use for a long wait.
     */
    static Properties readProperties(Properties kafkaProperties) {
        Properties props = new Properties();
        props.putAll(kafkaProperties);
        props.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "50");
        return props;
    }

    TurnResumer(Topics topics, WireFormat format, Admin admin, Supplier<GrouplessConsumer> consumers) {
        this.topics = topics;
        this.format = format;
        this.admin = admin;
        this.consumers = consumers;
    }

    /**
     * Opens the consumers the next takeover reads with, each with the metadata of the topics a takeover reads and a
     * connection to their leaders, on a thread of its own: the first takeover need not wait for that.
     */
    public void warmUp() {
        Thread warming = new Thread(() -> {
            List<String> read = List.of(topics.turnRequests(), topics.rawEvents(), topics.control(),
                    topics.toolResults());
            List<GrouplessConsumer> opened = new ArrayList<>();
            try {
                for (int i = 0; i < KEPT_CONSUMERS; i++) {
                    GrouplessConsumer consumer = consumers.get();
                    opened.add(consumer);
                    consumer.offsets(consumer.partitionsOf(read, TOPIC_WAIT), TopicReader.Start.END);
                }
            } catch (RuntimeException e) {
                // only a head start: a takeover opens what it lacks
                LOG.debug("could not open the takeover's read consumers ahead: {}", e.getMessage());
            }
            opened.forEach(this::giveBack);
        }, "turnstream-gateway-resume-warm-up");
        warming.setDaemon(true);
        warming.start();
    }

    /** Reads with a kept consumer (a new one when none is idle), kept again after a read that did not fail. */
    private <T> T withConsumer(Function<GrouplessConsumer, T> read) {
        GrouplessConsumer consumer;
        synchronized (idle) {
            consumer = idle.pollFirst();
        }
        if (consumer == null) {
            consumer = consumers.get();
        }
        T result;
        try {
            result = read.apply(consumer);
        } catch (RuntimeException e) {
            consumer.close();
            throw e;
        }
        giveBack(consumer);
        return result;
    }

    private void giveBack(GrouplessConsumer consumer) {
        synchronized (idle) {
            if (!closed && idle.size() < KEPT_CONSUMERS) {
                idle.addFirst(consumer);
                return;
            }
        }
        consumer.close();
    }

    /** How many read consumers are open and idle. */
    int idleConsumers() {
        synchronized (idle) {
            return idle.size();
        }
    }

    /**
     * What Kafka holds of the turns of {@code resumed}, read when first asked: each topic's partitions once, for all
     * of them. Ask only once every one of them is registered ({@link TakeoverHistory} waits for it): what is written
     * after the read reaches them through the inbox.
     */
    public TurnLog turnsOf(List<TurnRequestRecord> resumed) {
        return new TakeoverReads(resumed, topics, format, this::readKeys);
    }

    /**
     * A thread's records on {@code llm.turn-requests} (its requests and their steps, key {@code threadKey}) written
     * since a moment, in order, up to the end of the partition; each with its offset.
     */
    public List<ConsumerRecord<String, byte[]>> threadRecords(String threadKey, Instant since) {
        return readKeys(topics.turnRequests(), Set.of(threadKey), since);
    }

    /** What a takeover reads of its turns, each record decoded: from Kafka, or from a simulated log. */
    public interface TurnLog {
        /** The run's events on {@code llm.raw-events} written since {@code since}, in order. */
        List<StreamPayload> rawEvents(String runId, Instant since);

        /**
         * Where the run's records on {@code llm.raw-events} are that {@link #rawEvents} could not read, each with why
         * ({@code llm.raw-events-<partition>@<offset> (<reason>)}).
         */
        default List<String> unreadableRawEvents(String runId) {
            return List.of();
        }

        /** The turn's results on {@code llm.tool-results} written since {@code since}. */
        List<ToolResult> toolResults(String turnId, Instant since);

        /** The turn's commands on {@code llm.control} written since {@code since}. */
        List<ControlMessage> commands(String turnId, Instant since);
    }

    /**
     * What a takeover reads and decides of one turn, on any log: the run's raw events, folded; unless the turn
     * has ended, a cancel on {@code llm.control}, which cancels {@code active}; and, only when the turn waits
     * for tool results, the turn's tool results, handed to {@code active}. All are read from
     * {@link #CLOCK_SKEW} before the turn was accepted.
     *
     * <p>The cancel is read here because nothing else carries it to this owner: a cancel the previous owner
     * acted on lives only in that owner's transaction, aborted if its commit failed (for instance a transaction the
     * coordinator aborted at its timeout), and this gateway's inbox reads {@code llm.control} only from when it started. A
     * cancel accepted before this read is found here; one accepted after it reaches {@code active} through
     * the inbox, which was reading before the turn was registered.
     *
     * @throws TurnHistory.UnreadableRecords when a raw event of a turn that has not ended cannot be read: what
     *                                       it was (its end, maybe) is not known, so the turn cannot be resumed
     */
    public static TurnProgress progress(TurnRequestRecord request, List<TurnRequestRecord> steps,
                                        String requestedModel, TurnRegistry.ActiveTurn active, TurnLog log) {
        Instant since = since(request);
        TurnProgress progress = TurnProgress.of(request.runId(), requestedModel, steps,
                log.rawEvents(request.runId(), since));
        if (progress.endedStatus() != null) {
            return progress;
        }
        List<String> unreadable = log.unreadableRawEvents(request.runId());
        if (!unreadable.isEmpty()) {
            throw new TurnHistory.UnreadableRecords(progress, "its raw event at " + unreadable.get(0)
                    + " cannot be read; the topology dead-letters it");
        }
        log.commands(request.turnId(), since).stream()
                .filter(command -> command.type() == ControlMessage.Type.CANCEL).findFirst()
                .ifPresent(cancel -> active.cancel.cancel(cancel.reason()));
        if (progress.awaiting() != null) {
            log.toolResults(request.turnId(), since).stream().filter(result -> result.callId() != null)
                    .forEach(result -> active.result(result.callId()).complete(result));
        }
        return progress;
    }

    /** From when a turn's records are read: {@link #CLOCK_SKEW} before it was accepted. */
    static Instant since(TurnRequestRecord request) {
        return Instant.ofEpochMilli(Math.max(0, request.requestedAt() - CLOCK_SKEW.toMillis()));
    }

    /**
     * The records of {@code keys} on {@code topic} written since a moment: every partition the keys are written to,
     * read once, read_committed, up to its high watermark.
     */
    private List<ConsumerRecord<String, byte[]>> readKeys(String topic, Set<String> keys, Instant since) {
        List<ConsumerRecord<String, byte[]>> records = new ArrayList<>();
        long started = System.nanoTime();
        int[] scanned = {0};
        return withConsumer(reads -> {
            // the topic's partitions looked up once, not once a key: a lookup of a topic the consumer is not reading
            // may ask the cluster each time (41 keys' lookups took 554 ms in a cluster run)
            int partitionCount = reads.partitionsOf(List.of(topic), TOPIC_WAIT).size();
            Set<TopicPartition> partitions = new HashSet<>();
            for (String key : keys) {
                partitions.add(partitionOf(topic, partitionCount, key));
            }
            long partitionsFound = System.nanoTime();
            Map<TopicPartition, KafkaException> unreadable = new HashMap<>();
            Map<TopicPartition, Long> ends = highWatermarks(partitions, unreadable);
            if (!unreadable.isEmpty()) {
                throw unreadable.values().iterator().next();
            }
            Map<TopicPartition, Long> from = reads.offsets(partitions, TopicReader.Start.since(since));
            long startFound = System.nanoTime();
            readToHighWatermark(reads, from, ends, record -> {
                scanned[0]++;
                if (keys.contains(record.key())) {
                    records.add(record);
                }
            });
            // where a takeover's reads spend their time (docs/gateway.md, "Takeover")
            LOG.info("read {} for {} key(s) in {} ms: {} record(s), {} of them theirs, from {} partition(s) (the "
                            + "partitions in {} ms, where to start and end in {} ms, the records in {} ms)", topic,
                    keys.size(), millisSince(started), scanned[0], records.size(), partitions.size(),
                    (partitionsFound - started) / 1_000_000, (startFound - partitionsFound) / 1_000_000,
                    millisSince(startFound));
            return records;
        });
    }

    private static long millisSince(long nanos) {
        return (System.nanoTime() - nanos) / 1_000_000;
    }

    /** The partition {@code key} is written to (the producers' default partitioner). */
    private static TopicPartition partitionOf(String topic, int partitions, String key) {
        return new TopicPartition(topic, Utils.toPositive(Utils.murmur2(key.getBytes(StandardCharsets.UTF_8)))
                % partitions);
    }

    /**
     * What a read of some partitions got: each partition's records, or, for a partition whose end could not be
     * found, why (those are not read: they are tried again on their own, the others go on).
     */
    public record PartitionsRead(Map<TopicPartition, List<ConsumerRecord<String, byte[]>>> records,
                                 Map<TopicPartition, KafkaException> unreadable) {
    }

    /**
     * Every record of each partition from its offset in {@code from} to its end: one read for all of them whose end
     * is found.
     *
     * @throws KafkaException when the read itself fails: none of them is read
     */
    PartitionsRead readToEnd(Map<TopicPartition, Long> from) {
        long started = System.nanoTime();
        Map<TopicPartition, KafkaException> unreadable = new HashMap<>();
        Map<TopicPartition, Long> ends = highWatermarks(from.keySet(), unreadable);
        long endsFound = System.nanoTime();
        Map<TopicPartition, List<ConsumerRecord<String, byte[]>>> records = new HashMap<>();
        Map<TopicPartition, Long> readable = new HashMap<>();
        ends.keySet().forEach(partition -> {
            records.put(partition, new ArrayList<>());
            readable.put(partition, from.get(partition));
        });
        int[] read = {0};
        if (!readable.isEmpty()) {
            withConsumer(reads -> {
                readToHighWatermark(reads, readable, ends, record -> {
                    read[0]++;
                    records.get(new TopicPartition(record.topic(), record.partition())).add(record);
                });
                return read[0];
            });
        }
        LOG.info("read {} partition(s) of {} to their end in {} ms: {} record(s) (the ends in {} ms, the records in {} "
                + "ms)", readable.size(), topics.turnRequests(), millisSince(started), read[0],
                (endsFound - started) / 1_000_000, millisSince(endsFound));
        return new PartitionsRead(records, unreadable);
    }

    private void readToHighWatermark(GrouplessConsumer reads, Map<TopicPartition, Long> from,
                                     Map<TopicPartition, Long> ends, GrouplessConsumer.RecordHandler handler) {
        try {
            reads.read(from, ends, READ_LIMIT, handler);
        } catch (TimeoutException stillOpen) {
            LOG.warn("{}; going on with what is committed", stillOpen.getMessage());
        }
    }

    /** Each partition's high watermark; a partition whose end cannot be found goes to {@code unreadable}, with why. */
    private Map<TopicPartition, Long> highWatermarks(Set<TopicPartition> partitions,
                                                     Map<TopicPartition, KafkaException> unreadable) {
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        partitions.forEach(partition -> latest.put(partition, OffsetSpec.latest()));
        ListOffsetsResult listed = admin.listOffsets(latest, new ListOffsetsOptions(IsolationLevel.READ_UNCOMMITTED));
        Map<TopicPartition, Long> ends = new HashMap<>();
        for (TopicPartition partition : partitions) {
            try {
                ends.put(partition, listed.partitionResult(partition).get().offset());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new KafkaException("interrupted while reading the end of " + partitions, e);
            } catch (ExecutionException e) {
                unreadable.put(partition, new KafkaException("cannot read the end of " + partition, e.getCause()));
            }
        }
        return ends;
    }

    @Override
    public void close() {
        List<GrouplessConsumer> open;
        synchronized (idle) {
            closed = true;
            open = List.copyOf(idle);
            idle.clear();
        }
        open.forEach(GrouplessConsumer::close);
        admin.close(Duration.ofSeconds(5));
    }
}
