package io.turnstream.tools;

import io.turnstream.model.ToolResult;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntSupplier;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.metrics.JmxReporter;
import org.apache.kafka.common.metrics.KafkaMetricsContext;
import org.apache.kafka.common.metrics.MetricConfig;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.MetricsReporter;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.metrics.stats.Avg;
import org.apache.kafka.common.metrics.stats.CumulativeCount;
import org.apache.kafka.common.metrics.stats.Max;
import org.apache.kafka.common.metrics.stats.Rate;
import org.apache.kafka.common.utils.Time;

/**
 * The executor's metrics, as Kafka metrics published over JMX under
 * {@code turnstream.tools:type=tool-executor-metrics,instance-id=...[,tool=...]}: per tool
 * {@code calls-total}, {@code calls-rate}, {@code errors-total}, {@code timeouts-total},
 * {@code duration-avg-ms}, {@code duration-max-ms} (over the last minute); per instance {@code in-flight}
 * (calls running), {@code queued} (calls waiting for their turn), {@code paused-partitions},
 * {@code dead-letters-total} and {@code timed-out-transactions-total}. The same metrics go to Prometheus through
 * the reporter given to the constructor, as {@code turnstream_tool_executor_calls_total{tool=...}} and so on.
 */
public final class ToolExecutorMetrics implements AutoCloseable {

    static final String GROUP = "tool-executor-metrics";
    /** Unknown tool names are counted under one tag, so a model that invents names cannot grow the metric set. */
    static final String UNKNOWN_TOOL = "(unknown)";

    /** The sensors' windows run on this time, so their samples are stamped with it. */
    private final Time time = Time.SYSTEM;
    private final Metrics metrics;
    private final Map<String, String> instanceTags;

    public ToolExecutorMetrics(String instanceId, MetricsReporter prometheus) {
        this.metrics = new Metrics(new MetricConfig(), List.of(new JmxReporter(), prometheus), time,
                new KafkaMetricsContext("turnstream.tools"));
        this.instanceTags = Map.of("instance-id", instanceId);
    }

    void gauges(IntSupplier running, IntSupplier queued, IntSupplier paused) {
        metrics.addMetric(name("in-flight", "tool calls running now", instanceTags), (config, now) -> running.getAsInt());
        metrics.addMetric(name("queued", "tool calls waiting for their turn's running calls", instanceTags),
                (config, now) -> queued.getAsInt());
        metrics.addMetric(name("paused-partitions", "tool-call partitions paused because max-in-flight calls are held",
                instanceTags), (config, now) -> paused.getAsInt());
    }

    /** One result published for a call; the duration counts only for calls that ran. */
    void record(ToolResult result) {
        boolean unknown = result.error() != null && ToolErrors.TOOL_NOT_FOUND.equals(result.error().code());
        String tool = unknown ? UNKNOWN_TOOL : result.toolName();
        long now = time.milliseconds();
        long durationMs = result.completedAt() - result.startedAt();
        sensor("calls", tool).record(1, now);
        if (!result.success()) {
            sensor("errors", tool).record(1, now);
            if (result.error() != null && ToolErrors.TIMEOUT.equals(result.error().code())) {
                sensor("timeouts", tool).record(1, now);
            }
        }
        if (durationMs > 0) {
            sensor("duration", tool).record(durationMs, now);
        }
    }

    /** A tool-call record that was not a call went to the dead-letter topic. */
    void deadLettered() {
        count("dead-letters", "tool-call records sent to the dead-letter topic");
    }

    /** The transaction coordinator aborted a transaction at its timeout and fenced the producer; the executor went on. */
    void timedOutTransaction() {
        count("timed-out-transactions", "transactions the coordinator aborted at transaction.timeout.ms, fencing the "
                + "producer; the executor went on with a new one");
    }

    /** Counts one of a per-instance total, {@code KIND-total}. */
    private void count(String kind, String description) {
        Sensor sensor = metrics.getSensor(kind);
        if (sensor == null) {
            sensor = metrics.sensor(kind);
            sensor.add(name(kind + "-total", description, instanceTags), new CumulativeCount());
        }
        sensor.record();
    }

    /** The current value of a metric, for tests and embedding; {@code tool} null for the per-instance gauges. */
    public double value(String metric, String tool) {
        Map<String, String> tags = tool == null ? instanceTags : toolTags(tool);
        var found = metrics.metric(metrics.metricName(metric, GROUP, tags));
        return found == null ? 0 : ((Number) found.metricValue()).doubleValue();
    }

    private Sensor sensor(String kind, String tool) {
        String sensorName = kind + "." + tool;
        Sensor existing = metrics.getSensor(sensorName);
        if (existing != null) {
            return existing;
        }
        synchronized (this) {
            Sensor sensor = metrics.sensor(sensorName);
            if (!sensor.hasMetrics()) {
                Map<String, String> tags = toolTags(tool);
                switch (kind) {
                    case "calls" -> {
                        sensor.add(name("calls-total", "tool calls answered", tags), new CumulativeCount());
                        sensor.add(name("calls-rate", "tool calls answered per second", tags), new Rate());
                    }
                    case "errors" -> sensor.add(name("errors-total", "tool calls answered with an error", tags), new CumulativeCount());
                    case "timeouts" -> sensor.add(name("timeouts-total", "tool calls that timed out", tags), new CumulativeCount());
                    case "duration" -> {
                        sensor.add(name("duration-avg-ms", "average run time of a tool call", tags), new Avg());
                        sensor.add(name("duration-max-ms", "longest run time of a tool call", tags), new Max());
                    }
                    default -> throw new IllegalArgumentException(kind);
                }
            }
            return sensor;
        }
    }

    private Map<String, String> toolTags(String tool) {
        Map<String, String> tags = new LinkedHashMap<>(instanceTags);
        tags.put("tool", tool);
        return tags;
    }

    private MetricName name(String name, String description, Map<String, String> tags) {
        return metrics.metricName(name, GROUP, description, tags);
    }

    @Override
    public void close() {
        metrics.close();
    }
}
