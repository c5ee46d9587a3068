package io.turnstream.bench;

import io.turnstream.bench.BenchResults.LadderStep;
import io.turnstream.bench.BenchResults.Memory;
import io.turnstream.bench.BenchResults.StepPairs;
import io.turnstream.model.Json;
import io.turnstream.model.Topics;
import io.turnstream.runtime.StreamsService;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.Producer;

/**
 * The load ladder: at each step, N paced turns stream into the topology and into the pass-through
 * app alternately, pair after pair, each run on fresh topics and a fresh app; after a warm-up, a
 * window is measured and then drained (the load runs on until every delta of the window has shown
 * in an upsert, or the drain limit passes); then the open turns are ended. Memory is sampled in
 * every topology run at the largest step while its turns are open.
 */
final class LadderRun {

    private static final String TOPOLOGY_APP = "bench-ladder-topology";
    private static final String PASS_THROUGH_APP = "bench-ladder-passthrough";

    private final BenchCluster cluster;
    private final BenchConfig config;
    private final Settle settle;
    private final PrintWriter progress;
    private final List<Memory> memory = new ArrayList<>();

    LadderRun(BenchCluster cluster, BenchConfig config, Settle settle, PrintWriter progress) {
        this.cluster = cluster;
        this.config = config;
        this.settle = settle;
        this.progress = progress;
    }

    /**
     * Every step of {@link BenchConfig#steps()}, {@link BenchConfig#pairsAt} pairs each: a topology
     * run, then a pass-through run when {@code withBaseline}. Each run's own warm-up is not measured; each run
     * begins once the machine has settled.
     */
    List<StepPairs> sweep(boolean withBaseline) throws Exception {
        List<StepPairs> steps = new ArrayList<>();
        List<Integer> turnCounts = config.steps();
        int largest = turnCounts.get(turnCounts.size() - 1);
        for (int turns : turnCounts) {
            List<LadderStep> topology = new ArrayList<>();
            List<LadderStep> passThrough = new ArrayList<>();
            int pairs = config.pairsAt(turns);
            for (int pair = 1; pair <= pairs; pair++) {
                progress.printf("ladder %d turns, %s %d of %d%n", turns, withBaseline ? "pair" : "run", pair, pairs);
                String run = turns + "-p" + pair;
                settle.before("ladder " + turns + " turns, topology " + pair);
                topology.add(topology("ladder-topology-" + run, TOPOLOGY_APP + "-" + run, turns,
                        withBaseline && turns == largest ? pair : 0));
                if (withBaseline) {
                    settle.before("ladder " + turns + " turns, pass-through " + pair);
                    passThrough.add(passThrough(turns, "ladder-passthrough-" + run, PASS_THROUGH_APP + "-" + run));
                }
            }
            steps.add(new StepPairs(turns, topology, passThrough));
        }
        return steps;
    }

    /** One topology run at {@code turns} turns; memory sampled while its turns are open when {@code memoryRun} > 0. */
    private LadderStep topology(String phase, String appId, int turns, int memoryRun) throws Exception {
        Topics topics = cluster.createTopics(phase);
        LatencyTracker tracker = new LatencyTracker(config.deltaIntervalNanos());
        LadderStep step;
        try (StreamsService app = cluster.startTopology(appId, topics, 0);
             Producer<String, byte[]> producer = cluster.producer();
             TopicTail tail = TopicTail.start(cluster.bootstrapServers(), topics.upserts(),
                     (record, visible) -> tracker.onUpsert(record.value(), visible));
             TopicTail appends = TopicTail.start(cluster.bootstrapServers(), topics.itemAppends(),
                     (record, visible) -> tracker.onAppend(record.key(), record.value(), visible))) {
            long heapIdle = memoryRun > 0 ? Resources.heapAfterGc() : 0;
            Runnable whileOpen = memoryRun == 0 ? () -> { } : () -> {
                int open = tracker.openTurns();
                long heap = Resources.heapAfterGc();
                Map<String, Long> rocks = Resources.rocksDbMemory(app.streams());
                memory.add(new Memory(memoryRun, open, heapIdle, heap, open == 0 ? 0 : (heap - heapIdle) / open,
                        rocks.values().stream().mapToLong(Long::longValue).sum(), rocks));
            };
            step = step("topology", app, appId, turns, producer, topics.rawEvents(), tracker, whileOpen);
        }
        // after the run: its turns have ended, so the log holds all the appends the tracker read
        long text = tracker.allAppendTextBytes();
        long stored = cluster.logBytes(topics.itemAppends());
        progress.printf("  appends stored in the log: %,d bytes for %,d bytes of text (%.2fx)%n", stored, text,
                text == 0 ? 0.0 : (double) stored / text);
        return step.withAppendLogBytesPerContentByte(text == 0 ? null : round((double) stored / text));
    }

    /** The pass-through app at one step: its latency is the floor any Streams app pays here. */
    private LadderStep passThrough(int turns, String phase, String appId) throws Exception {
        Topics topics = cluster.createTopics(phase);
        String copy = cluster.createTopic("bench." + phase + ".copy");
        LatencyTracker tracker = new LatencyTracker(config.deltaIntervalNanos());
        try (StreamsService app = cluster.startPassThrough(appId, topics.rawEvents(), copy, false);
             Producer<String, byte[]> producer = cluster.producer();
             TopicTail tail = TopicTail.start(cluster.bootstrapServers(), copy, (record, visible) ->
                     tracker.onCopiedEvent(record.key(), Json.MAPPER.readTree(record.value()).path("event_id").asText(),
                             visible))) {
            return step("pass-through", app, appId, turns, producer, topics.rawEvents(), tracker, () -> { });
        }
    }

    /** The memory samples of the topology's runs at the largest step, one per run. */
    List<Memory> memory() {
        return List.copyOf(memory);
    }

    private LadderStep step(String name, StreamsService app, String appId, int turns, Producer<String, byte[]> producer, String topic,
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
            long retries0 = FloodRun.producerRetries(List.of(app));
            long gc0 = Resources.gcMillis();
            long maxLag = 0;
            while (System.nanoTime() < to) {
                Thread.sleep(100);
                maxLag = Math.max(maxLag, load.lagNanos());
            }
            long sent = load.sent() - sent0;
            long appCpu = Resources.threadsCpuNanos(appId) - appCpu0;
            long processCpu = Resources.processCpuNanos() - processCpu0;
            long retries = FloodRun.producerRetries(List.of(app)) - retries0;
            long gc = Resources.gcMillis() - gc0;
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
                    nullableRound(tracker.appendBytesPerTextByte()), null, retries, gc);
            progress.printf("  %,.0f events/s sent (%,.0f offered), %,.0f upserts/s, emit p99 %.1f ms, "
                            + "content p99 %.1f ms (through appends %.1f ms), %d deltas never shown, %,d records sent again, "
                            + "GC %,d ms%n",
                    step.sentEventsPerSec(), offered, step.upsertsPerSec(), emit.p99(), step.contentLatency().p99(),
                    step.appendLatency().p99(), owed, retries, gc);
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
