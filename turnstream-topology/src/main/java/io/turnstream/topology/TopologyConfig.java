package io.turnstream.topology;

import io.turnstream.model.Topics;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.FailoverDefaults;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.TenantClaims;
import io.turnstream.schema.WireFormats;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.streams.StreamsConfig;

/**
 * Every setting of the topology, with its default, in one place. Read from {@link Settings}
 * (properties file, environment, flags); keys are listed in the README.
 *
 * @param gradient token counts per batch level; the last repeats (cumulative thresholds 10, 20, 40, ...)
 * @param minGrowthFraction optional growth rule: a next threshold is at least this fraction above
 *     the tokens already emitted, bounding write amplification for very long items; 0 (off) keeps
 *     the seed's gradient exactly
 * @param batchTimeoutMs wall-clock time after an item's last delta before its unemitted content is emitted
 * @param idleTimeoutMs wall-clock time without any event after which a turn is closed with TURN_TIMEOUT
 * @param punctuateIntervalMs how often the wall-clock punctuator looks for due deadlines
 * @param closedTurnRetentionMs how long a closed turn is remembered, so late events for it are
 *     told apart from events for turns never started
 * @param itemStateRetentionMs how long a closed turn's keys stay on the compacted {@code llm.item-state}
 *     before they get tombstones, so the topic (and every reader's start-up) holds what is recent
 * @param claims checks the gateway's signature of {@code response_start.tenant_id} ({@link TenantClaims})
 * @param commitPacing when the stream thread commits under exactly-once ({@link CommitPacer})
 */
public record TopologyConfig(Topics topics, List<Integer> gradient, double minGrowthFraction, long batchTimeoutMs,
                             long idleTimeoutMs, long punctuateIntervalMs, long closedTurnRetentionMs,
                             long itemStateRetentionMs, String applicationId, String stateDir, WireFormat wireFormat, Properties kafka,
                             TenantClaims claims, CommitPacing commitPacing) {

    public static final List<Integer> SEED_GRADIENT =
            List.of(10, 10, 20, 20, 50, 50, 50, 50, 100, 100, 200, 200, 500, 500, 1000, 1000, 2000);

    public static final String GRADIENT = "turnstream.batch.gradient";
    public static final String MIN_GROWTH_FRACTION = "turnstream.batch.min-growth-fraction";
    public static final String BATCH_TIMEOUT_MS = "turnstream.batch.timeout.ms";
    public static final String IDLE_TIMEOUT_MS = "turnstream.turn.idle-timeout.ms";
    public static final String PUNCTUATE_INTERVAL_MS = "turnstream.punctuate.interval.ms";
    public static final String CLOSED_TURN_RETENTION_MS = "turnstream.turn.closed-retention.ms";
    public static final String ITEM_STATE_RETENTION_MS = "turnstream.item-state.retention.ms";
    public static final String APPLICATION_ID = "turnstream.application.id";
    public static final String STATE_DIR = "turnstream.state.dir";
    public static final String COMMIT_INTERVAL_MS = "turnstream.commit.interval.ms";
    public static final String COMMIT_BEHIND_INTERVAL_MS = "turnstream.commit.behind-interval.ms";
    public static final String COMMIT_BEHIND_AFTER_MS = "turnstream.commit.behind-after.ms";

    public static final long DEFAULT_BATCH_TIMEOUT_MS = 1_000;
    public static final long DEFAULT_IDLE_TIMEOUT_MS = 600_000;
    public static final long DEFAULT_PUNCTUATE_INTERVAL_MS = 100;
    public static final long DEFAULT_ITEM_STATE_RETENTION_MS = Duration.ofDays(7).toMillis();
    public static final String DEFAULT_STANDBY_REPLICAS = "1";
    /** The compression of everything the topology writes; {@code compression.type} or {@code producer.compression.type} override it. */
    public static final String DEFAULT_COMPRESSION = "lz4";
    /** How long the topology's producer waits for one produce request (Kafka: 30 s). */
    public static final String DEFAULT_REQUEST_TIMEOUT_MS = "15000";
    /** How long a send may be retried before the task is closed dirty and resumes from its last commit. */
    public static final String DEFAULT_DELIVERY_TIMEOUT_MS = "30000";
    /**
     * Records one poll of the stream thread's main consumer returns (Kafka Streams: 1000). The thread
     * processes all of them, committing on the way, before it polls again, and only a poll lets it
     * rejoin a rebalance: with a backlog, 1000 records held a dead instance's takeover for seconds
     * (docs/runtime.md, "Where a takeover's time goes").
     */
    public static final String DEFAULT_MAX_POLL_RECORDS = "100";
    /**
     * Bytes of one producer batch (Kafka: 16384). Each batch the topology's producer opens allocates
     * lz4's two 64 KB block buffers, and a commit closes every open batch; at 16 KB a partition of
     * upserts (each with its item's whole content) took a new batch every few records (profiled: 5%
     * of the stream thread in the flood).
     */
    public static final String DEFAULT_BATCH_SIZE = "65536";
    /**
     * Off ({@code -1}): a task waits for no empty input partition before it processes (Kafka Streams: 0,
     * wait for the fetched lag only). Each task has one partition of one input topic, so there is nothing
     * to align, and the check formatted a log line on every empty-queue call (profiled in the flood).
     */
    public static final String DEFAULT_MAX_TASK_IDLE_MS = "-1";
    /**
     * Bytes of each index of a changelog segment, its offsets' and its timestamps' (Kafka: 10 MB). A broker creates a
     * segment's indexes at their first entry, after 4 KB of log, each a file of this size mapped into memory. A store's
     * changelog partition gets a few KB per commit, so that first entry often comes with the commit's transaction
     * marker, and the first write into a fresh 10 MB mapping took 2.4 ms per index on the bench machine (0.12 ms at
     * 256 KB): a new topology's first commits spent 100-320 ms on their markers to its 16 changelog partitions while
     * the next transaction's first sends were refused (docs/benchmarks.md, "The flood's refused sends").
     */
    public static final String DEFAULT_CHANGELOG_SEGMENT_INDEX_BYTES = "262144";
    /**
     * Bytes of a changelog segment (Kafka: 1 GB): as much as its 256 KB indexes cover at one entry per 4 KB of log, and
     * a segment the log cleaner can compact sooner (it never compacts the active one), so a restore can read less.
     */
    public static final String DEFAULT_CHANGELOG_SEGMENT_BYTES = "67108864";
    /**
     * How often the stream thread commits under exactly-once while its input is fresh (Kafka Streams: 100 ms).
     * An upsert is visible to {@code read_committed} readers only after the commit that follows it, so the
     * wait for the next commit is most of the emit latency; each commit also writes every open item's chunk,
     * so a shorter interval costs throughput where many items stream (docs/runtime.md, the settings table).
     */
    public static final String DEFAULT_COMMIT_INTERVAL_MS = "75";
    /**
     * How often it commits while behind its input (Kafka Streams' {@code commit.interval.ms}): a commit's
     * price is mostly fixed, so larger transactions let a topology that fell behind catch up sooner
     * (docs/runtime.md, "A commit interval that follows the input").
     */
    public static final String DEFAULT_COMMIT_BEHIND_INTERVAL_MS = "500";
    /** Input whose records are older than this (by their timestamps) counts as behind. */
    public static final String DEFAULT_COMMIT_BEHIND_AFTER_MS = "1000";
    public static final String DEFAULT_APPLICATION_ID = "turnstream-topology";
    public static final String DEFAULT_STATE_DIR = System.getProperty("java.io.tmpdir") + "/turnstream-state";

    public TopologyConfig {
        if (gradient.isEmpty() || gradient.stream().anyMatch(step -> step <= 0)) {
            throw new IllegalArgumentException(GRADIENT + " must be a non-empty list of positive token counts, got " + gradient);
        }
        if (minGrowthFraction < 0) {
            throw new IllegalArgumentException(MIN_GROWTH_FRACTION + " must be >= 0, got " + minGrowthFraction);
        }
        requirePositive(BATCH_TIMEOUT_MS, batchTimeoutMs);
        requirePositive(IDLE_TIMEOUT_MS, idleTimeoutMs);
        requirePositive(PUNCTUATE_INTERVAL_MS, punctuateIntervalMs);
        requirePositive(CLOSED_TURN_RETENTION_MS, closedTurnRetentionMs);
        requirePositive(ITEM_STATE_RETENTION_MS, itemStateRetentionMs);
        gradient = List.copyOf(gradient);
    }

    /**
     * When the stream thread commits under exactly-once: every {@code intervalMs} while the input is fresh
     * (the processor asks for each commit), every {@code behindIntervalMs} (Kafka Streams' own
     * {@code commit.interval.ms}) while its records are more than {@code behindAfterMs} old. Not
     * {@code adaptive} (one fixed interval, Kafka Streams' alone) under at-least-once, when the user sets
     * {@code commit.interval.ms} itself, or when the two intervals are the same.
     */
    public record CommitPacing(long intervalMs, long behindIntervalMs, long behindAfterMs, boolean adaptive) {

        public CommitPacing {
            requirePositive(COMMIT_INTERVAL_MS, intervalMs);
            requirePositive(COMMIT_BEHIND_INTERVAL_MS, behindIntervalMs);
            requirePositive(COMMIT_BEHIND_AFTER_MS, behindAfterMs);
            if (behindIntervalMs < intervalMs) {
                throw new IllegalArgumentException(COMMIT_BEHIND_INTERVAL_MS + " (" + behindIntervalMs + ") must be at least "
                        + COMMIT_INTERVAL_MS + " (" + intervalMs + ")");
            }
        }

        static CommitPacing from(Settings settings, Properties kafka) {
            long interval = settings.getLong(COMMIT_INTERVAL_MS, Long.parseLong(DEFAULT_COMMIT_INTERVAL_MS));
            long behindInterval = settings.getLong(COMMIT_BEHIND_INTERVAL_MS,
                    Math.max(interval, Long.parseLong(DEFAULT_COMMIT_BEHIND_INTERVAL_MS)));
            long behindAfter = settings.getLong(COMMIT_BEHIND_AFTER_MS, Long.parseLong(DEFAULT_COMMIT_BEHIND_AFTER_MS));
            boolean exactlyOnce = StreamsConfig.EXACTLY_ONCE_V2.equals(
                    kafka.getProperty(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2));
            boolean adaptive = exactlyOnce && !kafka.containsKey(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG)
                    && behindInterval > interval;
            return new CommitPacing(interval, behindInterval, behindAfter, adaptive);
        }

        /** Kafka Streams' own {@code commit.interval.ms} under exactly-once, unless the user set it. */
        String streamsCommitIntervalMs() {
            return Long.toString(adaptive ? behindIntervalMs : intervalMs);
        }
    }

    public static TopologyConfig defaults() {
        return from(Settings.of(new Properties()));
    }

    public static TopologyConfig from(Settings settings) {
        long idle = settings.getLong(IDLE_TIMEOUT_MS, DEFAULT_IDLE_TIMEOUT_MS);
        return new TopologyConfig(
                settings.topics(),
                parseGradient(settings.get(GRADIENT, null)),
                Double.parseDouble(settings.get(MIN_GROWTH_FRACTION, "0")),
                settings.getLong(BATCH_TIMEOUT_MS, DEFAULT_BATCH_TIMEOUT_MS),
                idle,
                settings.getLong(PUNCTUATE_INTERVAL_MS, DEFAULT_PUNCTUATE_INTERVAL_MS),
                settings.getLong(CLOSED_TURN_RETENTION_MS, idle),
                settings.getLong(ITEM_STATE_RETENTION_MS, DEFAULT_ITEM_STATE_RETENTION_MS),
                settings.get(APPLICATION_ID, DEFAULT_APPLICATION_ID),
                settings.get(STATE_DIR, DEFAULT_STATE_DIR),
                WireFormats.from(settings),
                settings.kafkaProperties(),
                TenantClaims.from(settings, System.getenv()),
                CommitPacing.from(settings, settings.kafkaProperties()));
    }

    /**
     * Kafka Streams properties: our defaults (exactly-once, a standby replica of each store, quick
     * failover, small changelog segments), then every Kafka property the user gave.
     */
    public Properties streamsProperties() {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        // a second instance keeps a warm copy of each store: a dead instance's tasks resume there
        // without restoring the changelog first (no cost while there is one instance)
        props.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, DEFAULT_STANDBY_REPLICAS);
        // The topology has no global stores; this only opts into the Kafka 5.0 default early.
        props.put("processing.exception.handler.global.enabled", "true");
        props.put(StreamsConfig.MAX_TASK_IDLE_MS_CONFIG, DEFAULT_MAX_TASK_IDLE_MS);
        props.putAll(kafka);
        // the stores' changelogs, as Kafka Streams creates them (a topic that exists keeps its own)
        props.putIfAbsent(StreamsConfig.topicPrefix(TopicConfig.SEGMENT_BYTES_CONFIG), DEFAULT_CHANGELOG_SEGMENT_BYTES);
        props.putIfAbsent(StreamsConfig.topicPrefix(TopicConfig.SEGMENT_INDEX_BYTES_CONFIG),
                DEFAULT_CHANGELOG_SEGMENT_INDEX_BYTES);
        if (StreamsConfig.EXACTLY_ONCE_V2.equals(props.getProperty(StreamsConfig.PROCESSING_GUARANTEE_CONFIG))) {
            // at-least-once keeps Streams' 30 s: nothing waits for its commits to be read
            props.putIfAbsent(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, commitPacing.streamsCommitIntervalMs());
        }
        // Appends, upserts and store changes are small JSON records with the same field names: a
        // compressed batch of them stores a fraction of their bytes (docs/benchmarks.md)
        producerDefault(props, ProducerConfig.COMPRESSION_TYPE_CONFIG, DEFAULT_COMPRESSION);
        producerDefault(props, ProducerConfig.BATCH_SIZE_CONFIG, DEFAULT_BATCH_SIZE);
        // Under exactly-once Kafka Streams retries a send forever (delivery.timeout.ms = Integer.MAX_VALUE)
        // and flushes before each commit without a time limit: one batch that a partition's new leader
        // keeps refusing after a broker dies (the broker has aborted its transaction meanwhile) hangs the
        // stream thread in the commit until max.poll.interval.ms. Bounded, the send fails, the task is
        // closed dirty (its transaction aborted) and resumes from its last commit (docs/runtime.md).
        producerDefault(props, ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, DEFAULT_REQUEST_TIMEOUT_MS);
        producerDefault(props, ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, DEFAULT_DELIVERY_TIMEOUT_MS);
        mainConsumerDefault(props, ConsumerConfig.MAX_POLL_RECORDS_CONFIG, DEFAULT_MAX_POLL_RECORDS);
        FailoverDefaults.groupMember(props);
        // a dead instance's open transaction blocks its successor's restore and every read_committed reader
        // until the broker aborts it: nobody else holds its transactional id to fence it
        FailoverDefaults.transactionalProducer(props);
        return props;
    }

    /** Sets a producer property unless the user gave it, plain or with the {@code producer.} prefix. */
    private static void producerDefault(Properties props, String key, String value) {
        if (!props.containsKey(key)) {
            props.putIfAbsent(StreamsConfig.producerPrefix(key), value);
        }
    }

    /**
     * Sets a property of the stream thread's main consumer (not the restore or global consumer) unless
     * the user gave it plain, with the {@code consumer.} or with the {@code main.consumer.} prefix.
     */
    private static void mainConsumerDefault(Properties props, String key, String value) {
        if (!props.containsKey(key) && !props.containsKey(StreamsConfig.consumerPrefix(key))) {
            props.putIfAbsent(StreamsConfig.mainConsumerPrefix(key), value);
        }
    }

    public TopologyConfig withTopics(Topics newTopics) {
        return new TopologyConfig(newTopics, gradient, minGrowthFraction, batchTimeoutMs, idleTimeoutMs,
                punctuateIntervalMs, closedTurnRetentionMs, itemStateRetentionMs, applicationId, stateDir, wireFormat,
                kafka, claims, commitPacing);
    }

    private static List<Integer> parseGradient(String value) {
        if (value == null || value.isBlank()) {
            return SEED_GRADIENT;
        }
        try {
            return Arrays.stream(value.split(",")).map(String::strip).map(Integer::valueOf).toList();
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(GRADIENT + " must be comma-separated token counts, got '" + value + "'");
        }
    }

    private static void requirePositive(String key, long value) {
        if (value <= 0) {
            throw new IllegalArgumentException(key + " must be > 0, got " + value);
        }
    }
}
