package io.turnstream.bench;

import io.turnstream.bench.BenchResults.Amplification;
import io.turnstream.bench.BenchResults.FloodResult;
import io.turnstream.bench.BenchResults.LadderStep;
import io.turnstream.bench.BenchResults.Machine;
import io.turnstream.bench.BenchResults.Ratios;
import io.turnstream.bench.BenchResults.RunSettings;
import io.turnstream.bench.BenchResults.Target;
import io.turnstream.model.Json;
import io.turnstream.topology.TopologyConfig;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.common.utils.AppInfoParser;
import org.apache.kafka.streams.StreamsConfig;

/**
 * One benchmark run on a fresh embedded broker: the load ladder, the pass-through latency baseline,
 * the flood throughput of the plain consumer, the pass-through app and the topology, and the write
 * amplification. Writes {@code results.json}, {@code results.md} and the charts to an output
 * directory.
 */
public final class Bench {

    public static final String RESULTS_JSON = "results.json";
    public static final String RESULTS_MD = "results.md";

    private final BenchConfig config;
    private final Properties kafkaOverrides;
    private final PrintWriter progress;

    /**
     * @param kafkaOverrides Kafka and Streams properties applied to both the topology and the
     *     pass-through app (for example {@code commit.interval.ms})
     */
    public Bench(BenchConfig config, Properties kafkaOverrides, PrintWriter progress) {
        this.config = config;
        this.kafkaOverrides = kafkaOverrides;
        this.progress = progress;
    }

    public BenchResults run(Path outputDir) throws Exception {
        long start = System.nanoTime();
        Files.createDirectories(outputDir);
        Machine machine = machine();
        progress.printf("turnstream bench: %d cpus, %,d MB memory, %s; results in %s%n", machine.cpus(),
                machine.memoryBytes() >> 20, machine.jdk(), outputDir);
        progress.flush();
        List<LadderStep> ladder;
        LadderStep passThrough;
        List<FloodResult> flood;
        List<Amplification> amplification;
        BenchResults.Memory memory;
        try (BenchCluster cluster = new BenchCluster(kafkaOverrides, config.partitions())) {
            LadderRun ladderRun = new LadderRun(cluster, config, progress);
            ladder = ladderRun.topology();
            memory = ladderRun.memory();
            passThrough = ladderRun.passThrough(config.passThroughStep());
            flood = new FloodRun(cluster, config, progress).run();
            amplification = new AmplificationRun(cluster, config, progress).run();
        }
        Integer sustained = ladder.stream().filter(LadderStep::sustained).map(LadderStep::turns)
                .max(Integer::compare).orElse(null);
        Ratios ratios = ratios(ladder, passThrough, flood);
        BenchResults results = new BenchResults(machine, settings(), ladder, sustained, passThrough, flood,
                amplification, memory, ratios, targets(ladder, flood, amplification, ratios),
                LadderRun.round((System.nanoTime() - start) / 1e9));
        write(results, outputDir);
        progress.printf("done in %.0f s: %s, %s%n", results.durationSeconds(), outputDir.resolve(RESULTS_JSON),
                outputDir.resolve(RESULTS_MD));
        progress.flush();
        return results;
    }

    private void write(BenchResults results, Path outputDir) throws IOException {
        Files.write(outputDir.resolve(RESULTS_JSON), Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsBytes(results));
        Files.writeString(outputDir.resolve(RESULTS_MD), ResultsReport.markdown(results));
        Charts.write(results, outputDir);
    }

    private Ratios ratios(List<LadderStep> ladder, LadderStep passThrough, List<FloodResult> flood) {
        FloodResult consumer = find(flood, FloodRun.CONSUMER);
        FloodResult copy = find(flood, FloodRun.PASS_THROUGH);
        FloodResult topology = find(flood, FloodRun.TOPOLOGY);
        LadderStep sameStep = stepOf(ladder, passThrough.turns());
        return new Ratios(ratio(topology.eventsPerSec(), copy.eventsPerSec()),
                ratio(topology.eventsPerSec(), consumer.eventsPerSec()),
                ratio(topology.appCpuMsPer1000Events(), copy.appCpuMsPer1000Events()),
                sameStep == null ? null : ratio(sameStep.emitLatency().p99(), passThrough.emitLatency().p99()));
    }

    private List<Target> targets(List<LadderStep> ladder, List<FloodResult> flood, List<Amplification> amplification,
                                 Ratios ratios) {
        List<Target> targets = new ArrayList<>();
        targets.add(new Target("flood throughput vs pass-through", ">= 0.50",
                String.format("%.2f", ratios.floodThroughputVsPassThrough()), ratios.floodThroughputVsPassThrough() >= 0.5));
        long commitMs = commitIntervalMs();
        LadderStep step = stepOf(ladder, config.passThroughStep());
        if (step != null) {
            targets.add(new Target("emit p99 at " + step.turns() + " turns", "<= " + (commitMs + 50) + " ms",
                    step.emitLatency().p99() + " ms", step.emitLatency().p99() <= commitMs + 50));
            targets.add(new Target("content p99 at " + step.turns() + " turns (every delta)", "<= " + (commitMs + 50) + " ms",
                    step.contentLatency().p99() + " ms", step.contentLatency().p99() <= commitMs + 50));
            long appendTarget = commitMs + TopologyConfig.DEFAULT_PUNCTUATE_INTERVAL_MS + 50;
            targets.add(new Target("content p99 through appends at " + step.turns() + " turns", "<= " + appendTarget + " ms",
                    step.appendLatency().p99() + " ms", step.appendLatency().count() > 0 && step.appendLatency().p99() <= appendTarget));
            Double appendRatio = step.appendBytesPerContentByte();
            targets.add(new Target("append bytes / content bytes at " + step.turns() + " turns", "<= 3x",
                    appendRatio == null ? "n/a" : String.format("%.2fx", appendRatio), appendRatio != null && appendRatio <= 3));
        }
        // the growth rule's bound: emissions grow geometrically by (1 + f), so the sum of emitted
        // contents stays under (1 + f) / f times the final one; one more for envelopes and short items
        double bound = (1 + config.growthFraction()) / config.growthFraction() + 1;
        int longest = config.itemLengths().stream().max(Integer::compare).orElse(0);
        for (Amplification a : amplification) {
            if (a.tokens() == longest) {
                targets.add(new Target("upsert amplification at " + a.tokens() + " tokens, " + a.gradient(),
                        String.format("bounded (<= %.1fx)", bound), String.format("%.2fx", a.upsertAmplification()),
                        a.upsertAmplification() <= bound));
            }
        }
        double worstChangelog = amplification.stream().mapToDouble(Amplification::changelogRatio).max().orElse(0);
        targets.add(new Target("changelog bytes / content bytes (records, worst length)", "<= 3x",
                String.format("%.2fx", worstChangelog), worstChangelog <= 3));
        double worstDisk = amplification.stream().mapToDouble(Amplification::changelogDiskRatio).max().orElse(0);
        targets.add(new Target("changelog bytes / content bytes (on disk, worst length)", "<= 3x",
                String.format("%.2fx", worstDisk), worstDisk <= 3));
        return targets;
    }

    private RunSettings settings() {
        Map<String, String> overrides = new TreeMap<>();
        kafkaOverrides.stringPropertyNames().forEach(k -> overrides.put(k, kafkaOverrides.getProperty(k)));
        return new RunSettings(config.ladder(), config.warmup().toMillis() / 1000.0, config.measure().toMillis() / 1000.0,
                config.tokensPerSecond(), config.tokensPerDelta(), config.reasoningTokens().toString(),
                config.messageTokens().toString(), config.partitions(),
                kafkaOverrides.getProperty(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2),
                commitIntervalMs(), config.growthFraction(), config.floodEvents(), config.latencyTargetMs(), overrides);
    }

    /** The commit interval both apps run with: the user's, else Streams' default for exactly-once. */
    private long commitIntervalMs() {
        String guarantee = kafkaOverrides.getProperty(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        long byDefault = StreamsConfig.AT_LEAST_ONCE.equals(guarantee) ? 30_000 : 100;
        return Long.parseLong(kafkaOverrides.getProperty(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, Long.toString(byDefault)));
    }

    private static Machine machine() {
        Runtime runtime = Runtime.getRuntime();
        return new Machine(runtime.availableProcessors(), Resources.totalMemoryBytes(),
                System.getProperty("java.vm.name") + " " + System.getProperty("java.version"),
                System.getProperty("os.name") + " " + System.getProperty("os.version") + " " + System.getProperty("os.arch"),
                runtime.maxMemory(), AppInfoParser.getVersion(), Instant.now().toString());
    }

    private static FloodResult find(List<FloodResult> flood, String app) {
        return flood.stream().filter(f -> f.app().equals(app)).findFirst().orElseThrow();
    }

    private static LadderStep stepOf(List<LadderStep> ladder, int turns) {
        return ladder.stream().filter(s -> s.turns() == turns).findFirst().orElse(null);
    }

    private static Double ratio(double a, double b) {
        return b == 0 ? null : LadderRun.round(a / b);
    }
}
