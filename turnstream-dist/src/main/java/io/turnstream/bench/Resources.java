package io.turnstream.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.streams.KafkaStreams;

/** CPU time, heap and RocksDB memory, read from the JVM and from Kafka Streams' metrics. */
final class Resources {

    /** RocksDB's own memory, by Streams' property-based metric names (KIP-607). */
    private static final java.util.Set<String> ROCKSDB_MEMORY =
            java.util.Set.of("size-all-mem-tables", "block-cache-usage", "estimate-table-readers-mem");

    private Resources() {
    }

    /** CPU time of every live thread whose name contains {@code fragment} (an application id). */
    static long threadsCpuNanos(String fragment) {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long total = 0;
        for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (info != null && info.getThreadName().contains(fragment)) {
                total += Math.max(0, threads.getThreadCpuTime(info.getThreadId()));
            }
        }
        return total;
    }

    /** Milliseconds the JIT compilers have spent since the JVM started (0 where the JVM does not say). */
    static long jitMillis() {
        java.lang.management.CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        return jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : 0;
    }

    /** Milliseconds every garbage collector has spent since the JVM started. */
    static long gcMillis() {
        long total = 0;
        for (java.lang.management.GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            total += Math.max(0, gc.getCollectionTime());
        }
        return total;
    }

    /** CPU time of the whole process: broker, load producer, consumers and applications. */
    static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /** The load averages of {@code /proc/loadavg}; where there is none, the JVM's 1-minute figure alone. */
    static BenchResults.LoadAverage loadAverage() {
        try {
            String[] fields = Files.readString(Path.of("/proc/loadavg")).strip().split("\\s+");
            return new BenchResults.LoadAverage(Double.parseDouble(fields[0]), Double.parseDouble(fields[1]),
                    Double.parseDouble(fields[2]));
        } catch (IOException | RuntimeException e) {
            double one = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
            return new BenchResults.LoadAverage(one < 0 ? null : one, null, null);
        }
    }

    static long totalMemoryBytes() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getTotalMemorySize();
    }

    /** Heap in use after a full collection: what is retained, not what awaits collection. */
    static long heapAfterGc() {
        System.gc();
        System.gc();
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /** RocksDB memory of every store of the application, summed by metric name. */
    static Map<String, Long> rocksDbMemory(KafkaStreams streams) {
        Map<String, Long> sums = new TreeMap<>();
        for (Map.Entry<MetricName, ? extends Metric> metric : streams.metrics().entrySet()) {
            MetricName name = metric.getKey();
            if (name.group().equals("stream-state-metrics") && ROCKSDB_MEMORY.contains(name.name())
                    && metric.getValue().metricValue() instanceof Number value) {
                sums.merge(name.name(), value.longValue(), Long::sum);
            }
        }
        return sums;
    }
}
