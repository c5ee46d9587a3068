package io.turnstream.bench;

import java.util.List;
import java.util.Map;

/** Every figure of one benchmark run; written as {@code results.json} and rendered as {@code results.md}. */
public record BenchResults(Machine machine, RunSettings settings, List<LadderStep> ladder,
                           Integer largestSustainedStep, LadderStep passThroughLatency, List<FloodResult> flood,
                           List<Amplification> amplification, Memory memory, Ratios ratios, List<Target> targets,
                           double durationSeconds) {

    public record Machine(int cpus, long memoryBytes, String jdk, String os, long maxHeapBytes, String kafka,
                          String startedAt) {
    }

    public record RunSettings(List<Integer> ladder, double warmupSeconds, double measureSeconds, int tokensPerSecond,
                              int tokensPerDelta, String reasoningTokens, String messageTokens, int partitions,
                              String processingGuarantee, long commitIntervalMs, double growthFraction,
                              int floodEvents, long latencyTargetMs, Map<String, String> kafkaOverrides) {
    }

    /**
     * One load level: {@code turns} concurrent paced turns. Rates are over the measurement window;
     * CPU is per 1,000 raw events, of the application's threads and of the whole process. Append
     * latency is content latency through {@code llm.item-appends}; append bytes per content byte are
     * the append records' keys and values over the text they carried (null for the pass-through).
     */
    public record LadderStep(String app, int turns, double offeredEventsPerSec, double sentEventsPerSec,
                             double upsertsPerSec, Percentiles emitLatency, Percentiles contentLatency,
                             long owedDeltas, double producerLagMs, double appCpuMsPer1000Events,
                             double processCpuMsPer1000Events, boolean sustained, Percentiles appendLatency,
                             Double appendBytesPerContentByte) {
    }

    /** One application reading {@code events} raw events as fast as it can. */
    public record FloodResult(String app, long events, double seconds, double eventsPerSec, long outputRecords,
                              double outputPerSec, double appCpuMsPer1000Events) {
    }

    /**
     * One item of {@code tokens} tokens through the topology: bytes on the upserts topic over its
     * final content, and changelog bytes (record keys and values, and on disk) over the turn's content.
     */
    public record Amplification(String gradient, int tokens, long contentBytes, long upserts, long upsertBytes,
                                double upsertAmplification, long turnContentBytes, long changelogRecordBytes,
                                double changelogRatio, long changelogDiskBytes, double changelogDiskRatio) {
    }

    /** Heap after GC of the whole JVM (broker included) idle and with {@code openTurns} open, and RocksDB's own. */
    public record Memory(int openTurns, long heapIdleBytes, long heapOpenBytes, long heapPerOpenTurnBytes,
                         long rocksDbBytes, Map<String, Long> rocksDb) {
    }

    /** The topology over its baselines; null where a figure is missing. */
    public record Ratios(Double floodThroughputVsPassThrough, Double floodThroughputVsConsumer,
                         Double cpuPerEventVsPassThrough, Double emitP99VsPassThroughP99) {
    }

    public record Target(String name, String target, String measured, boolean met) {
    }
}
