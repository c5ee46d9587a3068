package io.turnstream.runtime;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.MetricsReporter;

/**
 * Shows the metrics of a Kafka {@link org.apache.kafka.common.metrics.Metrics} registry of our own
 * (not a client's: those have Micrometer's binders) as Micrometer meters, as they are made and removed.
 * {@code <prefix>.<group without -metrics>.<name>} with the metric's tags; a {@code -total} metric is a
 * counter, anything else a gauge.
 */
final class KafkaMetricsBridge implements MetricsReporter {

    /** Kafka's count of its own metrics: nothing to watch. */
    private static final String COUNT_GROUP = "kafka-metrics-count";

    private final MeterRegistry registry;
    private final String prefix;
    private final Map<MetricName, Meter> meters = new ConcurrentHashMap<>();

    KafkaMetricsBridge(MeterRegistry registry, String prefix) {
        this.registry = registry;
        this.prefix = prefix;
    }

    @Override
    public void init(List<KafkaMetric> metrics) {
        metrics.forEach(this::metricChange);
    }

    @Override
    public void metricChange(KafkaMetric metric) {
        MetricName name = metric.metricName();
        if (COUNT_GROUP.equals(name.group())) {
            return;
        }
        // a replaced metric: drop the meter that reads the old one first, or registering would return it
        metricRemoval(metric);
        List<Tag> tags = new ArrayList<>();
        name.tags().forEach((key, value) -> tags.add(Tag.of(key, value)));
        String base = prefix + "." + name.group().replace("-metrics", "").replace('-', '.') + ".";
        Meter meter;
        if (name.name().endsWith("-total")) {
            String counter = base + name.name().substring(0, name.name().length() - "-total".length()).replace('-', '.');
            meter = FunctionCounter.builder(counter, metric, KafkaMetricsBridge::value)
                    .description(name.description()).tags(tags).register(registry);
        } else {
            meter = Gauge.builder(base + name.name().replace('-', '.'), metric, KafkaMetricsBridge::value)
                    .description(name.description()).tags(tags).register(registry);
        }
        meters.put(name, meter);
    }

    @Override
    public void metricRemoval(KafkaMetric metric) {
        Meter meter = meters.remove(metric.metricName());
        if (meter != null) {
            registry.remove(meter);
        }
    }

    private static double value(KafkaMetric metric) {
        return metric.metricValue() instanceof Number number ? number.doubleValue() : Double.NaN;
    }

    @Override
    public void close() {
        meters.values().forEach(registry::remove);
        meters.clear();
    }

    @Override
    public void configure(Map<String, ?> configs) {
    }
}
