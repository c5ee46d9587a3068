package io.turnstream.bench;

import java.util.List;
import java.util.Map;

/**
 * Every figure of one benchmark run; written as {@code results.json} and rendered as {@code results.md}.
 * {@code figures} are the headline figures, each the median and spread of its runs (interleaved pairs
 * where a baseline is compared, repeats otherwise); the other fields hold every single run they come
 * from. A phase left out ({@code --only}) leaves its fields empty or null.
 */
public record BenchResults(Machine machine, RunSettings settings, LoadAverage loadBefore, LoadAverage loadAfter,
                           List<Figure> figures, List<String> warnings, List<StepPairs> ladder,
                           Integer largestSustainedStep, List<FloodResult> flood, List<Amplification> amplification,
                           List<Memory> memory, List<Target> targets, List<SettleWait> settling,
                           double durationSeconds) {

    /** One figure: its name (the key {@code --compare} matches by), unit ("x" for a ratio) and spread over its runs. */
    public record Figure(String name, String unit, Spread spread) {
    }

    /** The machine's load averages over 1, 5 and 15 minutes (null where the system does not say). */
    public record LoadAverage(Double one, Double five, Double fifteen) {
    }

    /**
     * Before the measured run {@code run}, begun at {@code at}: how long the bench waited for the machine to settle
     * ({@link Settle}), whether it had ({@code settled} null when the run did not wait), the CPUs' idle share and this
     * process's share of all cores over the last window of the wait, and the load average before it.
     */
    public record SettleWait(String run, String at, double waitedSeconds, Boolean settled, Double idlePercent,
                             Double processPercent, LoadAverage load) {
    }

    /**
     * One ladder step, {@code turns} turns: runs of the topology and of the pass-through app,
     * alternately, each on fresh topics (pass-through empty when only the topology ran).
     */
    public record StepPairs(int turns, List<LadderStep> topology, List<LadderStep> passThrough) {

        /** Sustained: the median emit p99 of the topology's runs under {@code targetMs}, every delta shown in every run. */
        public boolean sustained(long targetMs) {
            if (topology.isEmpty() || topology.stream().anyMatch(s -> s.owedDeltas() > 0 || s.emitLatency().count() == 0)) {
                return false;
            }
            return Spread.of(topology.stream().map(s -> s.emitLatency().p99()).toList()).median() < targetMs;
        }
    }

    public record Machine(int cpus, long memoryBytes, String jdk, String os, long maxHeapBytes, String kafka,
                          String startedAt) {
    }

    /**
     * How the run was set up. The topology commits every {@code commitIntervalMs} while its input is fresh;
     * when its commits follow the input, every {@code commitBehindIntervalMs} once its records are more than
     * {@code commitBehindAfterMs} old (both null when one fixed interval commits, and in results of runs
     * before the pacing).
     */
    public record RunSettings(List<Integer> ladder, double warmupSeconds, double measureSeconds, int tokensPerSecond,
                              int tokensPerDelta, String reasoningTokens, String messageTokens, int partitions,
                              String processingGuarantee, long commitIntervalMs, Long commitBehindIntervalMs,
                              Long commitBehindAfterMs, double growthFraction,
                              int floodEvents, long latencyTargetMs, int pairs, Map<Integer, Integer> pairsPerStep,
                              int targetStep, int amplificationRuns, List<String> phases,
                              Map<String, String> kafkaOverrides) {
    }

    /**
     * One load level: {@code turns} concurrent paced turns. Rates are over the measurement window;
     * CPU is per 1,000 raw events, of the application's threads and of the whole process. Append
     * latency is content latency through {@code llm.item-appends}; append bytes per content byte are
     * the append records' keys and values over the text they carried, from the window's start; append
     * log bytes per content byte are the bytes of the appends topic's log segment files on the broker
     * (compressed batches, transaction markers: what it stores) over all the text the run's appends
     * carried (both null for the pass-through). {@code producerRetries} are the records the app's producer
     * sent again in the window (a send refused with {@code CONCURRENT_TRANSACTIONS} while the previous commit
     * completes is one), {@code gcMs} the whole process's garbage collection time in it (both null in results
     * of runs before they were recorded).
     */
    public record LadderStep(String app, int turns, double offeredEventsPerSec, double sentEventsPerSec,
                             double upsertsPerSec, Percentiles emitLatency, Percentiles contentLatency,
                             long owedDeltas, double producerLagMs, double appCpuMsPer1000Events,
                             double processCpuMsPer1000Events, boolean sustained, Percentiles appendLatency,
                             Double appendBytesPerContentByte, Double appendLogBytesPerContentByte,
                             Long producerRetries, Long gcMs) {

        LadderStep withAppendLogBytesPerContentByte(Double ratio) {
            return new LadderStep(app, turns, offeredEventsPerSec, sentEventsPerSec, upsertsPerSec, emitLatency,
                    contentLatency, owedDeltas, producerLagMs, appCpuMsPer1000Events, processCpuMsPer1000Events,
                    sustained, appendLatency, appendBytesPerContentByte, ratio, producerRetries, gcMs);
        }
    }

    /**
     * One application reading {@code events} raw events as fast as it can, in pair {@code pair} (from 1). Beside
     * the rate, what else the JVM did in its window (the flood's pairs drifted): JIT compilation ({@code jitMs},
     * all compiler threads), GC ({@code gcMs}, all collectors) and the CPU of the bench's own tail reading the
     * output ({@code tailCpuMs}); and the records the app's producer sent again ({@code producerRetries}, null for the
     * plain consumer): a pair whose topology retried after CONCURRENT_TRANSACTIONS was slow.
     */
    public record FloodResult(String app, int pair, long events, double seconds, double eventsPerSec, long outputRecords,
                              double outputPerSec, double appCpuMsPer1000Events, double jitMs, double gcMs,
                              double tailCpuMs, Long producerRetries) {
    }

    /**
     * One item of {@code tokens} tokens through the topology in run {@code run} (from 1): bytes on the
     * upserts topic over its final content, and changelog bytes (record keys and values, and on disk)
     * over the turn's content.
     */
    public record Amplification(int run, String gradient, int tokens, long contentBytes, long upserts, long upsertBytes,
                                double upsertAmplification, long turnContentBytes, long changelogRecordBytes,
                                double changelogRatio, long changelogDiskBytes, double changelogDiskRatio) {
    }

    /**
     * Heap after GC of the whole JVM (broker included) idle and with {@code openTurns} open, and
     * RocksDB's own, in one topology run (from 1) at the largest ladder step.
     */
    public record Memory(int run, int openTurns, long heapIdleBytes, long heapOpenBytes, long heapPerOpenTurnBytes,
                         long rocksDbBytes, Map<String, Long> rocksDb) {
    }

    /**
     * One pair of the isolation phase: tenant B's {@code POST /v1/turns} p99 and SSE delivery p99 (ms) on the
     * idle gateway, then while tenant A holds unknown-turn requests and SSE clients that stop reading.
     */
    public record IsolationPair(double idleTurnStartP99, double idleDeliveryP99, double loadedTurnStartP99,
                                double loadedDeliveryP99) {
    }

    /** A target judged on the median; {@code clear} when the whole range lies on the same side of it. */
    public record Target(String name, String target, String measured, boolean met, boolean clear) {
    }
}
