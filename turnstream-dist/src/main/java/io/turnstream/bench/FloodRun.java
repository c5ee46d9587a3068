package io.turnstream.bench;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.turnstream.bench.BenchResults.FloodResult;
import io.turnstream.model.Json;
import io.turnstream.model.Topics;
import io.turnstream.model.UiPayloadType;
import io.turnstream.runtime.StreamsService;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.LongPredicate;
import org.apache.kafka.clients.producer.Producer;

/**
 * Flood mode: in each pair, a fresh set of raw events is produced as fast as possible, then read on
 * the same broker by the topology, the pass-through Streams app (its baseline) and a plain consumer
 * (the machine's limit), in that order; pairs repeat on fresh topics, after unmeasured warm-up pairs
 * (below). Each rate is the events over the time from the contender being
 * ready (a Streams app RUNNING, so group join and task assignment are not counted) to its last
 * output record being visible to a read_committed consumer.
 *
 * <p>The warm-up: the JIT is what moved the pairs. In a quiet run of 8 pairs after one warm-up pair of a fifth of
 * the events (2026-11-27, 12:38 UTC), the compilers worked 4.8 s within the topology's first 4.2 s window and
 * 0.4 s within its eighth 2.1 s one, and the topology's rate rose from 71,120 to 142,005 events/s, the
 * pass-through's from 188,905 to 252,648; GC took 20-80 ms of a window. So the warm-up runs whole pairs
 * until neither Streams app's window spends more than {@link #SETTLED_JIT_SHARE} of its time compiling, at most
 * {@link BenchConfig#floodWarmupPairs()} of them.
 */
final class FloodRun {

    static final String CONSUMER = "plain consumer";
    static final String PASS_THROUGH = "pass-through Streams";
    static final String TOPOLOGY = "upsert topology (appends on)";
    private static final String PASS_THROUGH_APP = "bench-flood-passthrough";
    private static final String TOPOLOGY_APP = "bench-flood-topology";
    private static final int CONCURRENT_TURNS = 200;
    private static final int PRODUCE_ATTEMPTS = 3;
    // a lost write shows as a batch that never completes: give up on it after this, not the default 2 minutes
    private static final Duration DELIVERY_TIMEOUT = Duration.ofSeconds(30);
    // JIT time (all compiler threads) over a window's length; measured pairs stayed at 0.1-0.7 after settling
    static final double SETTLED_JIT_SHARE = 0.25;

    private final BenchCluster cluster;
    private final BenchConfig config;
    private final Settle settle;
    private final PrintWriter progress;

    /** @param settle waited on before each reader of a measured pair (the warm-up's do not wait) */
    FloodRun(BenchCluster cluster, BenchConfig config, Settle settle, PrintWriter progress) {
        this.cluster = cluster;
        this.config = config;
        this.settle = settle;
        this.progress = progress;
    }

    /** Every measured pair's results, warm-up left out. */
    List<FloodResult> run() throws Exception {
        for (int warmup = 1; ; warmup++) {
            List<FloodResult> streamsApps = pair(-warmup, config.floodEvents()).stream()
                    .filter(r -> !r.app().equals(CONSUMER)).toList();
            if (streamsApps.stream().allMatch(FloodRun::settled) || warmup == config.floodWarmupPairs()) {
                progress.printf("flood warm-up: %s after %d pair(s); JIT %s of the windows%n",
                        streamsApps.stream().allMatch(FloodRun::settled) ? "settled" : "not settled, measuring anyway",
                        warmup, String.join(" and ", streamsApps.stream()
                                .map(r -> String.format(Locale.ROOT, "%.0f%%", 100 * jitShare(r))).toList()));
                break;
            }
        }
        List<FloodResult> results = new ArrayList<>();
        for (int pair = 1; pair <= config.pairs(); pair++) {
            results.addAll(pair(pair, config.floodEvents()));
        }
        return results;
    }

    /** The share of a run's window the JIT compilers worked in. */
    static double jitShare(FloodResult run) {
        return run.jitMs() / Math.max(1.0, run.seconds() * 1000);
    }

    private static boolean settled(FloodResult run) {
        return jitShare(run) <= SETTLED_JIT_SHARE;
    }

    /** One pair on fresh topics; pairs below 0 are the warm-up's. */
    private List<FloodResult> pair(int pair, int events) throws Exception {
        String run = pair < 0 ? "warmup" + -pair : "p" + pair;
        progress.printf("flood %s: producing %,d raw events as fast as possible%n",
                pair < 0 ? "warm-up pair " + -pair + " (not measured)" : "pair " + pair + " of " + config.pairs(), events);
        progress.flush();
        Produced produced = produce("flood-" + run, events);
        Topics topics = produced.topics();
        LoadGenerator.Sent sent = produced.sent();
        List<FloodResult> results = new ArrayList<>();
        String topologyApp = TOPOLOGY_APP + "-" + run;
        settleBefore(pair, TOPOLOGY);
        try (StreamsService app = cluster.startTopology(topologyApp, topics, 0)) {
            results.add(measure(TOPOLOGY, pair, topologyApp, List.of(app), topics.upserts(), System.nanoTime(),
                    sent.events(), null, sent.turns()));
        }
        String copy = cluster.createTopic("bench.flood-" + run + ".copy");
        String copyApp = PASS_THROUGH_APP + "-" + run;
        settleBefore(pair, PASS_THROUGH);
        try (StreamsService app = cluster.startPassThrough(copyApp, topics.rawEvents(), copy, true)) {
            results.add(measure(PASS_THROUGH, pair, copyApp, List.of(app), copy, System.nanoTime(), sent.events(),
                    count -> count >= sent.events(), null));
        }
        settleBefore(pair, CONSUMER);
        results.add(measure(CONSUMER, pair, TopicTail.threadName(topics.rawEvents()), List.of(), topics.rawEvents(),
                System.nanoTime(), sent.events(), count -> count >= sent.events(), null));
        return results;
    }

    private void settleBefore(int pair, String reader) throws InterruptedException {
        if (pair > 0) {
            settle.before("flood pair " + pair + ", " + reader);
        }
    }

    /**
     * The topology alone with each of {@code instanceCounts} instances (Kafka Streams clients of one
     * application, each with its stores of its own) on fresh raw events: how its throughput grows with
     * instances. {@code pair} numbers the runs.
     */
    List<FloodResult> scaling(List<Integer> instanceCounts, int pair) throws Exception {
        List<FloodResult> results = new ArrayList<>();
        for (int instances : instanceCounts) {
            String run = "scaling-" + instances + "-p" + pair;
            progress.printf("flood, %d topology instance(s), run %d: producing %,d raw events%n", instances, pair,
                    config.floodEvents());
            progress.flush();
            Produced produced = produce(run, config.floodEvents());
            String app = TOPOLOGY_APP + "-" + run;
            List<StreamsService> apps = new ArrayList<>();
            try {
                // the clock starts when the first instance runs: it works while the others join, and their
                // joining (a rebalance) counts against them, never for them
                long start = 0;
                for (int i = 0; i < instances; i++) {
                    apps.add(cluster.startTopology(app, produced.topics(), 0, "state-" + run + "-" + i));
                    start = i == 0 ? System.nanoTime() : start;
                }
                results.add(measure(instances(instances), pair, app, apps, produced.topics().upserts(), start,
                        produced.sent().events(), null, produced.sent().turns()));
            } finally {
                for (StreamsService started : apps) {
                    started.close();
                }
            }
        }
        return results;
    }

    /** The name of the topology's figure with this many instances. */
    static String instances(int count) {
        return "upsert topology, " + count + (count == 1 ? " instance" : " instances");
    }

    private record Produced(Topics topics, LoadGenerator.Sent sent) {
    }

    /** {@code events} raw events as fast as possible, on fresh topics named after {@code run}. */
    private Produced produce(String run, int events) throws Exception {
        for (int attempt = 1; ; attempt++) {
            // a write the broker keeps refusing (BenchCluster.producer) expires: then fresh topics again
            Topics fresh = cluster.createTopics(run + (attempt == 1 ? "" : "-" + attempt));
            long start = System.nanoTime();
            try (Producer<String, byte[]> producer = cluster.producer(DELIVERY_TIMEOUT)) {
                LoadGenerator.Sent sent = LoadGenerator.flood(producer, fresh.rawEvents(), config, "f", CONCURRENT_TURNS,
                        events);
                progress.printf("  %,d events of %,d turns at %,.0f events/s%n", sent.events(), sent.turns(),
                        sent.events() * 1e9 / (System.nanoTime() - start));
                return new Produced(fresh, sent);
            } catch (IllegalStateException e) {
                if (attempt == PRODUCE_ATTEMPTS) {
                    throw e;
                }
                progress.printf("  %s; producing again on fresh topics%n", e.getMessage());
            }
        }
    }

    /**
     * Whether an upsert envelope ends its turn ({@code turn_completed} or {@code turn_error}). It reads only as far
     * as the payload's {@code type}, which comes before the content, so the topology's tail does about what the
     * pass-through's does (count records) on the two cores it shares with the measured app; it used to bind every
     * upsert whole, content included.
     */
    static boolean closesTurn(byte[] envelope) throws IOException {
        try (JsonParser json = Json.MAPPER.getFactory().createParser(envelope)) {
            if (json.nextToken() != JsonToken.START_OBJECT) {
                return false;
            }
            boolean inPayload = false;
            for (JsonToken token = json.nextToken(); token == JsonToken.FIELD_NAME; token = json.nextToken()) {
                String field = json.currentName();
                JsonToken value = json.nextToken();
                if (!inPayload && field.equals("payload") && value == JsonToken.START_OBJECT) {
                    inPayload = true;
                } else if (inPayload && field.equals("type")) {
                    UiPayloadType type = UiPayloadType.fromWire(json.getText());
                    return type == UiPayloadType.TURN_COMPLETED || type == UiPayloadType.TURN_ERROR;
                } else {
                    json.skipChildren();
                }
            }
            return false;
        }
    }

    /**
     * Tails {@code output} until done: {@code outputDone} by record count, or (the topology) until
     * {@code closedTurns} turns have closed. The time runs from {@code startNanos} (the app is
     * RUNNING, or the consumer about to start) to the last output record; CPU is of the app's
     * threads (names containing {@code threads}; for the plain consumer, its own thread) while it worked, and the
     * records its Streams {@code apps}' producers sent again meanwhile (none for the plain consumer).
     */
    private FloodResult measure(String name, int pair, String threads, List<StreamsService> apps, String output,
                                long startNanos, long events, LongPredicate outputDone, Integer closedTurns)
            throws Exception {
        long[] count = new long[1];
        long[] closed = new long[1];
        long[] last = {0};
        long cpu0 = Resources.threadsCpuNanos(threads);
        long jit0 = Resources.jitMillis();
        long gc0 = Resources.gcMillis();
        long retries0 = producerRetries(apps);
        long tailCpu;
        Duration limit = Duration.ofSeconds(Math.max(120, events / 1_000));
        boolean done;
        long cpu;
        try (TopicTail tail = TopicTail.start(cluster.bootstrapServers(), output, (record, visible) -> {
            synchronized (count) {
                count[0]++;
                last[0] = visible;
                if (closedTurns != null && closesTurn(record.value())) {
                    closed[0]++;
                }
            }
        })) {
            done = TopicTail.await(() -> {
                synchronized (count) {
                    return closedTurns != null ? closed[0] >= closedTurns : outputDone.test(count[0]);
                }
            }, limit);
            cpu = Resources.threadsCpuNanos(threads) - cpu0;
            tailCpu = Resources.threadsCpuNanos(TopicTail.threadName(output));
        }
        long jit = Resources.jitMillis() - jit0;
        long gc = Resources.gcMillis() - gc0;
        Long retries = apps.isEmpty() ? null : producerRetries(apps) - retries0;
        if (!done) {
            throw new IllegalStateException(name + " did not finish " + events + " flood events within " + limit.toSeconds() + " s");
        }
        double seconds = Math.max(1e-3, (last[0] - startNanos) / 1e9);
        FloodResult result = new FloodResult(name, pair, events, LadderRun.round(seconds), LadderRun.round(events / seconds),
                count[0], LadderRun.round(count[0] / seconds), LadderRun.perThousand(cpu, events), jit, gc,
                LadderRun.round(tailCpu / 1e6), retries);
        progress.printf("  %-22s %,10.0f events/s  (%,d output records, %.2f ms CPU per 1,000 events; in the window"
                        + " JIT %,d ms, GC %,d ms, tail CPU %,.0f ms%s)%n", name,
                result.eventsPerSec(), count[0], result.appCpuMsPer1000Events(), jit, gc, result.tailCpuMs(),
                retries == null ? "" : String.format(Locale.ROOT, ", %,d records sent again", retries));
        progress.flush();
        return result;
    }

    /**
     * Records the apps' producers sent again ({@code record-retry-total}). The slow flood pairs of 2026-11-27 were
     * those whose topology producer was refused with CONCURRENT_TRANSACTIONS and then out of order, and retried
     * (docs/benchmarks.md, "What lingers between runs, and what slows single flood pairs").
     */
    static long producerRetries(List<StreamsService> apps) {
        long total = 0;
        for (StreamsService app : apps) {
            for (var metric : app.streams().metrics().entrySet()) {
                if (metric.getKey().group().equals("producer-metrics") && metric.getKey().name().equals("record-retry-total")
                        && metric.getValue().metricValue() instanceof Number value) {
                    total += value.longValue();
                }
            }
        }
        return total;
    }
}
