package io.turnstream.bench;

import io.turnstream.bench.BenchResults.LadderStep;
import io.turnstream.bench.BenchResults.LatencyPairs;
import io.turnstream.bench.BenchResults.Memory;
import io.turnstream.model.Json;
import io.turnstream.model.Topics;
import io.turnstream.runtime.StreamsService;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.Producer;

/**
 * The load ladder: for each step, N paced turns stream into the topology; after a warm-up, a
 * window is measured and then drained (the load runs on until every delta of the window has shown
 * in an upsert, or the drain limit passes); then the open turns are ended. Memory is sampled at
 * the largest step while its turns are open. The latency pairs run one step the same way, the
 * topology and the pass-through app alternately, each run on fresh topics and a fresh app.
 */
final class LadderRun {

    private static final String LADDER_APP = "bench-ladder-topology";
    private static final String PAIR_TOPOLOGY_APP = "bench-latency-topology";
    private static final String PASS_THROUGH_APP = "bench-latency-passthrough";

    private final BenchCluster cluster;
    private final BenchConfig config;
    private final PrintWriter progress;
    private Memory memory;

    LadderRun(BenchCluster cluster, BenchConfig config, PrintWriter progress) {
        this.cluster = cluster;
        this.config = config;
        this.progress = progress;
    }

    /** Every step of the ladder, once, on one topology app. */
    List<LadderStep> sweep() throws Exception {
        return topology("ladder", LADDER_APP, config.ladder(), true);
    }

    /**
     * {@code config.pairs()} runs at {@code turns} turns of the topology, each followed by one of the
     * pass-through app when {@code withBaseline}. Each run's own warm-up is not measured.
     */
    LatencyPairs pairs(int turns, boolean withBaseline) throws Exception {
        List<LadderStep> topology = new ArrayList<>();
        List<LadderStep> passThrough = new ArrayList<>();
        for (int pair = 1; pair <= config.pairs(); pair++) {
            progress.printf("latency pair %d of %d at %d turns%n", pair, config.pairs(), turns);
            String run = "latency-topology-p" + pair;
            topology.addAll(topology(run, PAIR_TOPOLOGY_APP + "-p" + pair, List.of(turns), false));
            if (withBaseline) {
                passThrough.add(passThrough(turns, "latency-passthrough-p" + pair, PASS_THROUGH_APP + "-p" + pair));
            }
        }
        return new LatencyPairs(turns, topology, passThrough);
    }

    private List<LadderStep> topology(String phase, String appId, List<Integer> turnCounts, boolean sampleMemory)
            throws Exception {
        Topics topics = cluster.createTopics(phase);
        AtomicReference<LatencyTracker> current = new AtomicReference<>(new LatencyTracker(config.deltaIntervalNanos()));
        List<LadderStep> steps = new ArrayList<>();
        int largest = turnCounts.stream().max(Integer::compare).orElseThrow();
        try (StreamsService app = cluster.startTopology(appId, topics, 0);
             Producer<String, byte[]> producer = cluster.producer();
             TopicTail tail = TopicTail.start(cluster.bootstrapServers(), topics.upserts(),
                     (record, visible) -> current.get().onUpsert(record.value(), visible));
             TopicTail appends = TopicTail.start(cluster.bootstrapServers(), topics.itemAppends(),
                     (record, visible) -> current.get().onAppend(record.key(), record.value(), visible))) {
            long heapIdle = sampleMemory ? Resources.heapAfterGc() : 0;
            for (int turns : turnCounts) {
                LatencyTracker tracker = new LatencyTracker(config.deltaIntervalNanos());
                current.set(tracker);
                Runnable whileOpen = !sampleMemory || turns != largest ? () -> { } : () -> {
                    int open = tracker.openTurns();
                    long heap = Resources.heapAfterGc();
                    Map<String, Long> rocks = Resources.rocksDbMemory(app.streams());
                    memory = new Memory(open, heapIdle, heap, open == 0 ? 0 : (heap - heapIdle) / open,
                            rocks.values().stream().mapToLong(Long::longValue).sum(), rocks);
                };
                steps.add(step("topology", appId, turns, producer, topics.rawEvents(), tracker, whileOpen));
            }
        }
        return steps;
    }

    /** The pass-through app at one step: its latency is the floor any Streams app pays here. */
    private LadderStep passThrough(int turns, String phase, String appId) throws Exception {
        Topics topics = cluster.createTopics(phase);
        String copy = cluster.createTopic("bench." + phase + ".copy");
        LatencyTracker tracker = new LatencyTracker(config.deltaIntervalNanos());
        try (StreamsService app = cluster.startPassThrough(appId, topics.rawEvents(), copy);
             Producer<String, byte[]> producer = cluster.producer();
             TopicTail tail = TopicTail.start(cluster.bootstrapServers(), copy, (record, visible) ->
                     tracker.onCopiedEvent(record.key(), Json.MAPPER.readTree(record.value()).path("event_id").asText(),
                             visible))) {
            return step("pass-through", appId, turns, producer, topics.rawEvents(), tracker, () -> { });
        }
    }

    Memory memory() {
        return memory;
    }

    private LadderStep step(String name, String appId, int turns, Producer<String, byte[]> producer, String topic,
                            LatencyTracker tracker, Runnable whileOpen) throws InterruptedException {
        progress.printf("ladder %-12s %5d turns: warm-up %d s, measure %d s%n", name, turns,
                config.warmup().toSeconds(), config.measure().toSeconds());
        progress.flush();
        LoadGenerator load = LoadGenerator.paced(producer, topic, config, name.charAt(0) + "" + turns, turns, tracker);
        try {
            Thread.sleep(config.warmup().toMillis());
            long from = System.nanoTime();
            long to = from + config.measure().toNanos();
            tracker.window(from, to);
            long sent0 = load.sent();
            long appCpu0 = Resources.threadsCpuNanos(appId);
            long processCpu0 = Resources.processCpuNanos();
            long maxLag = 0;
            while (System.nanoTime() < to) {
                Thread.sleep(100);
                maxLag = Math.max(maxLag, load.lagNanos());
            }
            long sent = load.sent() - sent0;
            long appCpu = Resources.threadsCpuNanos(appId) - appCpu0;
            long processCpu = Resources.processCpuNanos() - processCpu0;
            boolean drained = TopicTail.await(() -> tracker.owedDeltas() == 0, config.drainLimit());
            long owed = drained ? 0 : tracker.owedDeltas();
            whileOpen.run();
            double seconds = config.measure().toNanos() / 1e9;
            double offered = turns * 1e9 / config.deltaIntervalNanos();
            Percentiles emit = tracker.emitLatency();
            LadderStep step = new LadderStep(name, turns, round(offered), round(sent / seconds),
                    round(tracker.upsertsInWindow() / seconds), emit, tracker.contentLatency(), owed,
                    round(maxLag / 1e6), perThousand(appCpu, sent), perThousand(processCpu, sent),
                    owed == 0 && emit.count() > 0 && emit.p99() < config.latencyTargetMs(), tracker.appendLatency(),
                    nullableRound(tracker.appendBytesPerTextByte()));
            progress.printf("  %,.0f events/s sent (%,.0f offered), %,.0f upserts/s, emit p99 %.1f ms, "
                            + "content p99 %.1f ms (through appends %.1f ms), %d deltas never shown%n",
                    step.sentEventsPerSec(), offered, step.upsertsPerSec(), emit.p99(), step.contentLatency().p99(),
                    step.appendLatency().p99(), owed);
            progress.flush();
            return step;
        } finally {
            load.close();
            TopicTail.await(() -> tracker.openTurns() == 0, Duration.ofSeconds(60));
        }
    }

    static double perThousand(long cpuNanos, long events) {
        return events == 0 ? 0 : round(cpuNanos / 1e6 * 1000 / events);
    }

    private static Double nullableRound(Double value) {
        return value == null ? null : round(value);
    }

    static double round(double value) {
        return Math.round(value * 100) / 100.0;
    }
}
