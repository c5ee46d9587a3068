package io.turnstream.runtime;

import io.micrometer.core.instrument.binder.kafka.KafkaStreamsMetrics;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one Kafka Streams application the way a production deployment needs it: a stream thread
 * that dies is replaced (within a budget, see {@link ThreadReplacementBudget}), state transitions
 * are logged, {@code /health} tells readiness (RUNNING) and liveness, and {@link #close()} shuts
 * down gracefully: in-flight work is committed and the group is left so that other instances take
 * over at once. Kafka's JmxReporter publishes the Streams metrics under the MBean domain
 * {@code kafka.streams} (and the clients' under {@code kafka.consumer}, {@code kafka.producer}); the
 * same metrics, custom sensors included, are bound to a {@link ServiceMetrics} served with the health
 * endpoint as {@code /metrics/prometheus}.
 */
public final class StreamsService implements AutoCloseable {

    /** How many thread replacements within the window are tolerated before the app gives up. */
    public static final String MAX_THREAD_REPLACEMENTS = "turnstream.streams.max-thread-replacements";
    public static final String THREAD_REPLACEMENT_WINDOW_MS = "turnstream.streams.thread-replacement-window.ms";
    /** How long a graceful close may take to commit and leave the group. */
    public static final String CLOSE_TIMEOUT_MS = "turnstream.streams.close-timeout.ms";
    public static final int DEFAULT_MAX_THREAD_REPLACEMENTS = 10;
    public static final long DEFAULT_THREAD_REPLACEMENT_WINDOW_MS = 300_000;
    public static final long DEFAULT_CLOSE_TIMEOUT_MS = 30_000;

    private static final Logger LOG = LoggerFactory.getLogger(StreamsService.class);

    /**
     * Runtime options; {@code healthPort} 0 picks a free port, a negative one serves no health endpoint,
     * which listens on {@code healthHost} ({@link HealthServer#host(Settings)}).
     */
    public record Options(int maxThreadReplacements, Duration replacementWindow, Duration closeTimeout, int healthPort,
                          String healthHost) {

        public static Options from(Settings settings, int healthPort) {
            return new Options(
                    (int) settings.getLong(MAX_THREAD_REPLACEMENTS, DEFAULT_MAX_THREAD_REPLACEMENTS),
                    Duration.ofMillis(settings.getLong(THREAD_REPLACEMENT_WINDOW_MS, DEFAULT_THREAD_REPLACEMENT_WINDOW_MS)),
                    Duration.ofMillis(settings.getLong(CLOSE_TIMEOUT_MS, DEFAULT_CLOSE_TIMEOUT_MS)),
                    healthPort,
                    HealthServer.host(settings));
        }
    }

    private final KafkaStreams streams;
    private final String applicationId;
    private final boolean staticMember;
    private final Options options;
    private final ThreadReplacementBudget replacements;
    private final SendFailures.Recorder sendFailures = new SendFailures.Recorder();
    /** Counted down at close: a thread waiting to be replaced (the schema registry cannot be reached) waits no more. */
    private final CountDownLatch closing = new CountDownLatch(1);
    private final CompletableFuture<Throwable> failure = new CompletableFuture<>();
    private final ServiceMetrics metrics;
    private final boolean ownsMetrics;
    private final AutoCloseable metricsBinding;
    /** Present under exactly-once: ends a dead instance's open transaction at the rebalance that drops it. */
    private final Optional<DeadInstanceFencer> fencer;
    private HealthServer health;

    private StreamsService(Topology topology, Properties streamsProperties, Options options, ServiceMetrics metrics,
                           boolean ownsMetrics) {
        this.applicationId = streamsProperties.getProperty(StreamsConfig.APPLICATION_ID_CONFIG);
        this.staticMember = streamsProperties.containsKey(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
        this.options = options;
        Properties props = new Properties();
        // No global stores here; opting into Kafka 5's default only silences a deprecation warning.
        props.put(StreamsConfig.PROCESSING_EXCEPTION_HANDLER_GLOBAL_ENABLED_CONFIG, "true");
        props.putAll(streamsProperties);
        props.putIfAbsent(StreamsConfig.PRODUCTION_EXCEPTION_HANDLER_CLASS_CONFIG, SendFailures.class.getName());
        props.put(SendFailures.RECORDER, sendFailures);
        this.streams = new KafkaStreams(topology, props);
        this.replacements = new ThreadReplacementBudget(options.maxThreadReplacements(), options.replacementWindow(),
                System::nanoTime, backoff -> closing.await(backoff.toMillis(), TimeUnit.MILLISECONDS));
        streams.setUncaughtExceptionHandler(replacements);
        streams.setStateListener(this::onStateChange);
        this.metrics = metrics;
        this.ownsMetrics = ownsMetrics;
        // the application's Streams metrics, its clients' and its custom sensors (the topology's dead letters)
        this.metricsBinding = metrics.bindKafka((refresh, every) -> new KafkaStreamsMetrics(streams, List.of(), refresh, every));
        this.fencer = DeadInstanceFencer.forApplication(props);
    }

    /** Starts the application and, unless disabled, its health endpoint, with metrics of its own. */
    public static StreamsService start(Topology topology, Properties streamsProperties, Options options) {
        return start(topology, streamsProperties, options,
                ServiceMetrics.create("topology", Settings.of(new Properties())), true);
    }

    /** As {@link #start(Topology, Properties, Options)}, with its metrics in the caller's registry (closed by the caller). */
    public static StreamsService start(Topology topology, Properties streamsProperties, Options options,
                                       ServiceMetrics metrics) {
        return start(topology, streamsProperties, options, metrics, false);
    }

    private static StreamsService start(Topology topology, Properties streamsProperties, Options options,
                                        ServiceMetrics metrics, boolean ownsMetrics) {
        StreamsService service;
        try {
            service = new StreamsService(topology, streamsProperties, options, metrics, ownsMetrics);
        } catch (RuntimeException e) {
            if (ownsMetrics) {
                metrics.close();
            }
            throw e;
        }
        try {
            if (options.healthPort() >= 0) {
                service.health = HealthServer.start(options.healthHost(), options.healthPort(), service::status, metrics);
                LOG.info("health endpoint on http://{}:{}/health, metrics on {}", options.healthHost(), service.health.port(),
                        ServiceMetrics.SCRAPE_PATH);
            }
            service.streams.start();
        } catch (RuntimeException e) {
            service.close();
            throw e;
        }
        return service;
    }

    private void onStateChange(KafkaStreams.State newState, KafkaStreams.State oldState) {
        LOG.info("{}: {} -> {}", applicationId, oldState, newState);
        if (newState == KafkaStreams.State.REBALANCING) {
            fencer.ifPresent(DeadInstanceFencer::rebalanceStarted);
        }
        if (newState == KafkaStreams.State.ERROR) {
            Throwable cause = replacements.reportedFailure();
            if ((cause == null || Failures.foundProducerFailed(cause)) && sendFailures.first() != null) {
                cause = sendFailures.first();
            }
            failure.complete(cause != null ? cause : new IllegalStateException("Kafka Streams entered the ERROR state"));
        }
    }

    public KafkaStreams.State state() {
        return streams.state();
    }

    public boolean isRunning() {
        return streams.state() == KafkaStreams.State.RUNNING;
    }

    /** Completes with the cause when the application stops by itself because processing cannot continue. */
    public CompletableFuture<Throwable> failure() {
        return failure;
    }

    /** The bound health port, or -1 when there is no health endpoint. */
    public int healthPort() {
        return health == null ? -1 : health.port();
    }

    /** The underlying client, for metrics and metadata. */
    public KafkaStreams streams() {
        return streams;
    }

    HealthServer.Status status() {
        KafkaStreams.State state = streams.state();
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("applicationId", applicationId);
        details.put("state", state.name());
        details.put("threads", streams.metadataForLocalThreads().size());
        Throwable failed = failure.getNow(null);
        if (failed != null) {
            details.put("error", Failures.describe(failed));
        }
        boolean live = state != KafkaStreams.State.ERROR && state != KafkaStreams.State.PENDING_ERROR
                && state != KafkaStreams.State.NOT_RUNNING && state != KafkaStreams.State.PENDING_SHUTDOWN;
        return new HealthServer.Status(state == KafkaStreams.State.RUNNING, live, details);
    }

    /**
     * Graceful shutdown: stream threads finish their current record, commit (with exactly-once, the
     * open transaction) and close their stores. A dynamic member leaves the group so that its tasks
     * move at once; a static member (group.instance.id) stays, expecting to come back.
     */
    @Override
    public void close() {
        closing.countDown();
        CloseOptions close = CloseOptions.timeout(options.closeTimeout()).withGroupMembershipOperation(staticMember
                ? CloseOptions.GroupMembershipOperation.REMAIN_IN_GROUP
                : CloseOptions.GroupMembershipOperation.LEAVE_GROUP);
        if (!streams.close(close)) {
            LOG.warn("{}: Kafka Streams did not close within {} s", applicationId, options.closeTimeout().toSeconds());
        }
        fencer.ifPresent(DeadInstanceFencer::close);
        if (health != null) {
            health.close();
        }
        try {
            metricsBinding.close();
        } catch (Exception e) {
            LOG.debug("unbinding the Streams metrics failed", e);
        }
        if (ownsMetrics) {
            metrics.close();
        }
    }
}
