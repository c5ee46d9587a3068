package io.turnstream.runtime;

import io.javalin.config.RoutesConfig;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.kafka.KafkaClientMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.BiFunction;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.metrics.MetricsReporter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One service's Micrometer registry in the Prometheus format, served as {@value #SCRAPE_PATH}: JVM and
 * process meters, the Kafka client metrics of the clients bound with {@code bind} (and the Kafka Streams
 * metrics, bound by the topology service's {@code StreamsService} through {@link #bindKafka}), and the
 * service's own meters. Every meter carries the tag {@code service} (topology, gateway, tool-executor, demo).
 */
public final class ServiceMetrics implements AutoCloseable {

    /** The Prometheus scrape route, served wherever a service serves its health. */
    public static final String SCRAPE_PATH = "/metrics/prometheus";
    /** How often the Kafka binders look for metrics that appeared since (new tasks, partitions, tools). */
    public static final String KAFKA_REFRESH_MS = "turnstream.metrics.kafka-refresh.ms";
    static final long DEFAULT_KAFKA_REFRESH_MS = 10_000;
    private static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
    private static final Logger LOG = LoggerFactory.getLogger(ServiceMetrics.class);

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final Duration kafkaRefresh;
    private final ScheduledExecutorService refresher;
    private final List<AutoCloseable> binders = new CopyOnWriteArrayList<>();

    private ServiceMetrics(String service, Duration kafkaRefresh) {
        this.kafkaRefresh = kafkaRefresh;
        this.refresher = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread thread = new Thread(r, "metrics-refresh-" + service);
            thread.setDaemon(true);
            return thread;
        });
        registry.config().commonTags(List.of(Tag.of("service", service)));
        new JvmMemoryMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        JvmGcMetrics gc = new JvmGcMetrics();
        gc.bindTo(registry);
        binders.add(gc);
    }

    /** @param service the {@code service} tag of every meter */
    public static ServiceMetrics create(String service, Settings settings) {
        return new ServiceMetrics(service, Duration.ofMillis(settings.getLong(KAFKA_REFRESH_MS, DEFAULT_KAFKA_REFRESH_MS)));
    }

    public MeterRegistry registry() {
        return registry;
    }

    public AutoCloseable bind(Producer<?, ?> producer) {
        return bindKafka((refresh, every) -> new KafkaClientMetrics(producer, List.of(), refresh, every));
    }

    public AutoCloseable bind(Consumer<?, ?> consumer) {
        return bindKafka((refresh, every) -> new KafkaClientMetrics(consumer, List.of(), refresh, every));
    }

    /**
     * Binds one of Micrometer's Kafka binders, made by {@code binder} with this registry's refresh thread and
     * interval; the Kafka Streams binder is bound this way where Streams is on the classpath (the runtime is
     * shared by services without it). Closing the result unbinds it.
     */
    public <T extends MeterBinder & AutoCloseable> AutoCloseable bindKafka(
            BiFunction<ScheduledExecutorService, Duration, T> binder) {
        return track(binder.apply(refresher, kafkaRefresh));
    }

    /** A reporter for a {@link org.apache.kafka.common.metrics.Metrics} of our own: its metrics appear here as they are made. */
    public MetricsReporter reporter(String prefix) {
        return new KafkaMetricsBridge(registry, prefix);
    }

    private <T extends MeterBinder & AutoCloseable> AutoCloseable track(T binder) {
        binder.bindTo(registry);
        binders.add(binder);
        return () -> {
            binders.remove(binder);
            binder.close();
        };
    }

    /** Every meter in the Prometheus text format. */
    public String scrape() {
        return registry.scrape();
    }

    /** Registers {@code GET} {@value #SCRAPE_PATH} on a server's routes. */
    public void serve(RoutesConfig routes) {
        routes.get(SCRAPE_PATH, ctx -> ctx.contentType(CONTENT_TYPE).result(scrape()));
    }

    @Override
    public void close() {
        for (AutoCloseable binder : binders) {
            try {
                binder.close();
            } catch (Exception e) {
                LOG.debug("closing a metrics binder failed", e);
            }
        }
        binders.clear();
        refresher.shutdownNow();
        registry.close();
    }
}
