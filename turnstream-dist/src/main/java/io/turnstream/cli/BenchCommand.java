package io.turnstream.cli;

import io.turnstream.bench.Bench;
import io.turnstream.bench.BenchConfig;
import io.turnstream.bench.BenchConfig.Phase;
import io.turnstream.bench.BenchProperties;
import io.turnstream.bench.BenchResults;
import io.turnstream.bench.BenchResults.Figure;
import io.turnstream.bench.ClusterBench;
import io.turnstream.bench.Comparison;
import io.turnstream.runtime.Settings;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code turnstream bench}: throughput, latency, amplification and memory against baselines, on an embedded broker. */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = {"Benchmarks the upsert topology on an embedded single-node broker.",
            "A ladder of concurrent paced turns (latency from each event's intended send time to a",
            "read_committed consumer), a flood of raw events read by a plain consumer, a pass-through",
            "Streams app and the topology, and the write amplification of long items. Writes",
            "results.json, results.md and PNG charts to --output. Each comparison (the flood, every",
            "ladder step) runs the topology and its baseline alternately (--pairs times, each on fresh",
            "topics) and reports the median and spread of the per-pair ratios; the amplification is",
            "repeated too. See docs/benchmarks.md for how long a run takes; --only flood with --quick",
            "is the quick check of one figure."})
public final class BenchCommand implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    @Option(names = "--quick", description = "A short run: smaller ladder, shorter windows, fewer flood events.")
    private boolean quick;

    @Option(names = "--cluster", paramLabel = "NODES",
            description = "Instead of the phases: the fault suite as a benchmark on a local cluster of NODES broker "
                    + "processes (3): the topology's throughput with one and with two instances, then two instances of "
                    + "each service with a topology instance, an executor, a gateway and a broker SIGKILLed in turn, "
                    + "--fault-runs times, each on a fresh cluster; reports each fault's takeover as the median and "
                    + "spread of the runs and charts the latency through each fault (docs/benchmarks.md).")
    private Integer clusterNodes;

    @Option(names = "--turns", paramLabel = "N",
            description = "With --cluster: turns started at once in the fault run (default: 200; quick: 20).")
    private Integer turns;

    @Option(names = "--fault-runs", paramLabel = "R",
            description = "With --cluster: fault runs, each on a fresh cluster; every fault figure is their median and "
                    + "spread (default: 3; quick: 1).")
    private Integer faultRuns;

    @Option(names = "--only", paramLabel = "PHASE", split = ",",
            description = "Measure only these phases: flood, ladder, appends (the topology's runs at the target step alone), "
                    + "amplification, isolation (another tenant's latencies at a gateway with abusive clients; default: all).")
    private List<String> only;

    @Option(names = "--pairs", paramLabel = "N",
            description = "Interleaved runs of the topology and its baseline per comparison (default: 5).")
    private Integer pairs;

    @Option(names = "--largest-step-pairs", paramLabel = "N",
            description = "Pairs at the largest ladder step, at most --pairs; lower it to shorten a run the most (default: 5).")
    private Integer largestStepPairs;

    @Option(names = "--amplification-runs", paramLabel = "N",
            description = "Repeats of the write-amplification phase, each on fresh topics (default: 3).")
    private Integer amplificationRuns;

    @Option(names = "--compare", paramLabel = "BASE.json",
            description = "An earlier results.json (with --cluster: cluster-results.json): prints, per figure, the "
                    + "change and whether it is beyond both runs' spread (a change) or inside it (noise); also written "
                    + "to comparison.md (cluster-comparison.md).")
    private Path compare;

    @Option(names = "--output", paramLabel = "DIR", defaultValue = "bench-results",
            description = "Where results.json, results.md and the charts go (default: ${DEFAULT-VALUE}).")
    private Path output;

    @Option(names = "--ladder", paramLabel = "N", split = ",",
            description = "Concurrent turns per ladder step (default: 50,200,1000; quick: 50,200).")
    private List<Integer> ladder;

    @Option(names = "--warmup", paramLabel = "SECONDS", description = "Warm-up of each ladder run (default: 5; quick: 3).")
    private Integer warmupSeconds;

    @Option(names = "--measure", paramLabel = "SECONDS", description = "Measurement window of each ladder run (default: 10; quick: 8).")
    private Integer measureSeconds;

    @Option(names = "--drain-limit", paramLabel = "SECONDS",
            description = "Longest wait after a window for upserts owed to its deltas (default: 60; quick: 30).")
    private Integer drainSeconds;

    @Option(names = "--tokens-per-second", paramLabel = "N", description = "Streaming rate per turn (default: 50).")
    private Integer tokensPerSecond;

    @Option(names = "--tokens-per-delta", paramLabel = "N", description = "Tokens (4 characters each) per delta (default: 3).")
    private Integer tokensPerDelta;

    @Option(names = "--reasoning-tokens", paramLabel = "MIN..MAX", description = "Reasoning item length (default: 100..400).")
    private String reasoningTokens;

    @Option(names = "--message-tokens", paramLabel = "MIN..MAX", description = "Message item length (default: 200..2000).")
    private String messageTokens;

    @Option(names = "--flood-events", paramLabel = "N", description = "Raw events in the flood runs (default: 1000000; quick: 50000).")
    private Integer floodEvents;

    @Option(names = "--flood-warmup-pairs", paramLabel = "N",
            description = "At most N unmeasured flood pairs of full size before the measured ones; they stop as soon as"
                    + " the JIT has settled (default: 10; quick: 4).")
    private Integer floodWarmupPairs;

    @Option(names = "--item-lengths", paramLabel = "TOKENS", split = ",",
            description = "Item lengths of the amplification runs (default: 100,1000,10000,100000; quick: up to 10000).")
    private List<Integer> itemLengths;

    @Option(names = "--growth-fraction", paramLabel = "F",
            description = "Growth rule measured beside the seed gradient (turnstream.batch.min-growth-fraction; default: 0.25).")
    private Double growthFraction;

    @Option(names = {"--target-step", "--pass-through-step"}, paramLabel = "N",
            description = "Ladder step whose figures the latency targets are judged on, and which --only appends runs "
                    + "(default: 200).")
    private Integer targetStep;

    @Option(names = "--partitions", paramLabel = "N", description = "Partitions of every benchmark topic (default: 4).")
    private Integer partitions;

    @Option(names = "--settle-wait", paramLabel = "SECONDS",
            description = "Before each measured run, wait at most this long for the machine to settle (CPUs idle for "
                    + "--settle-idle of the last 2 s); 0 does not wait (default: 120, at most 600 in all; quick: 20, 60).")
    private Integer settleWaitSeconds;

    @Option(names = "--settle-idle", paramLabel = "PERCENT",
            description = "The idle share of all cores that counts as settled (default: 80).")
    private Integer settleIdlePercent;

    @Option(names = "--config", paramLabel = "FILE",
            description = "Properties for both the topology and the pass-through app, as their --config takes them: "
                    + "Kafka's (e.g. commit.interval.ms, processing.guarantee, main.consumer.max.poll.records) and the "
                    + "topology's own (e.g. turnstream.commit.behind-interval.ms); with --cluster, for the topology of "
                    + "the throughput runs and every service of the fault run, any service's keys. A key the bench "
                    + "sets itself (bootstrap.servers, turnstream.application.id, turnstream.topic.*, ...) or, without "
                    + "--cluster, a turnstream. key the topology does not read is refused, by name.")
    private Path configFile;

    /** The options a cluster run reads; the others are the main bench's and would be silently ignored. */
    private static final Set<String> CLUSTER_OPTIONS = Set.of("--cluster", "--quick", "--turns", "--fault-runs",
            "--compare", "--output", "--config");
    /** The options only a cluster run reads. */
    private static final Set<String> CLUSTER_ONLY = Set.of("--turns", "--fault-runs");

    @Override
    public Integer call() throws Exception {
        checkCombination();
        BenchConfig config;
        Properties kafka;
        List<Figure> base;
        ClusterBench.Settings cluster;
        try {
            config = config();
            kafka = BenchProperties.from(Settings.load(configFile, null), clusterNodes != null);
            cluster = clusterNodes == null ? null : clusterSettings();
            base = compare == null ? null
                    : Comparison.readFigures(compare, cluster == null ? Comparison.Source.BENCH : Comparison.Source.CLUSTER);
        } catch (NoSuchFileException e) {
            throw new CliFailure(ExitCodes.CONFIG, e.getFile() + " does not exist");
        } catch (IOException | IllegalArgumentException e) {
            throw new CliFailure(ExitCodes.CONFIG, e.getMessage(), e);
        }
        if (cluster != null) {
            ClusterBench.Results results = new ClusterBench(cluster, kafka, spec.commandLine().getOut()).run(output);
            if (base != null) {
                Comparison.write(compare, base, results.figures(), output.resolve(ClusterBench.COMPARISON_MD),
                        spec.commandLine().getOut());
            }
            List<String> failures = results.failures();
            if (!failures.isEmpty()) {
                throw new CliFailure(ExitCodes.FAILURE, String.join("\n", failures));
            }
            return ExitCodes.OK;
        }
        BenchResults results = new Bench(config, kafka, spec.commandLine().getOut()).run(output);
        if (base != null) {
            Comparison.write(compare, base, results.figures(), output.resolve(Comparison.COMPARISON_MD),
                    spec.commandLine().getOut());
        }
        return ExitCodes.OK;
    }

    /** A usage error for options that do not go together, before anything is read or started. */
    private void checkCombination() {
        List<String> given = spec.commandLine().getParseResult().matchedOptions().stream().map(OptionSpec::longestName)
                .distinct().toList();
        if (clusterNodes != null) {
            if (clusterNodes < 3) {
                throw new CliFailure(ExitCodes.USAGE, "--cluster needs at least 3 nodes (one is killed, two keep a quorum)");
            }
            List<String> mainOnly = given.stream().filter(o -> !CLUSTER_OPTIONS.contains(o)).toList();
            if (!mainOnly.isEmpty()) {
                throw new CliFailure(ExitCodes.USAGE, String.join(", ", mainOnly) + (mainOnly.size() == 1 ? " does" : " do")
                        + " not go with --cluster, which reads only " + CLUSTER_OPTIONS.stream().sorted()
                        .collect(Collectors.joining(", ")));
            }
            return;
        }
        List<String> clusterOnly = given.stream().filter(CLUSTER_ONLY::contains).toList();
        if (!clusterOnly.isEmpty()) {
            throw new CliFailure(ExitCodes.USAGE, String.join(", ", clusterOnly) + (clusterOnly.size() == 1 ? " goes" : " go")
                    + " with --cluster (the ladder's turns are --ladder, its repeats --pairs)");
        }
    }

    private ClusterBench.Settings clusterSettings() {
        ClusterBench.Settings settings = quick ? ClusterBench.Settings.quick(clusterNodes)
                : ClusterBench.Settings.full(clusterNodes);
        settings = turns == null ? settings : settings.withTurns(turns);
        return faultRuns == null ? settings : settings.withFaultRuns(faultRuns);
    }

    private BenchConfig config() {
        BenchConfig d = quick ? BenchConfig.quick() : BenchConfig.full();
        return new BenchConfig(
                ladder != null ? ladder : d.ladder(),
                warmupSeconds != null ? Duration.ofSeconds(warmupSeconds) : d.warmup(),
                measureSeconds != null ? Duration.ofSeconds(measureSeconds) : d.measure(),
                drainSeconds != null ? Duration.ofSeconds(drainSeconds) : d.drainLimit(),
                tokensPerSecond != null ? tokensPerSecond : d.tokensPerSecond(),
                tokensPerDelta != null ? tokensPerDelta : d.tokensPerDelta(),
                reasoningTokens != null ? BenchConfig.Range.parse(reasoningTokens) : d.reasoningTokens(),
                messageTokens != null ? BenchConfig.Range.parse(messageTokens) : d.messageTokens(),
                floodEvents != null ? floodEvents : d.floodEvents(),
                itemLengths != null ? itemLengths : d.itemLengths(),
                growthFraction != null ? growthFraction : d.growthFraction(),
                targetStep != null ? targetStep : d.targetStep(),
                d.latencyTargetMs(),
                partitions != null ? partitions : d.partitions(),
                d.seed(),
                pairs != null ? pairs : d.pairs(),
                largestStepPairs != null ? largestStepPairs : d.largestStepPairs(),
                amplificationRuns != null ? amplificationRuns : d.amplificationRuns(),
                floodWarmupPairs != null ? floodWarmupPairs : d.floodWarmupPairs(),
                only != null ? only.stream().map(Phase::parse).collect(Collectors.toSet()) : d.phases(),
                settling(d.settle()));
    }

    private BenchConfig.Settling settling(BenchConfig.Settling d) {
        BenchConfig.Settling settling = settleWaitSeconds == null ? d : d.withMaxWait(Duration.ofSeconds(settleWaitSeconds));
        return settleIdlePercent == null ? settling : settling.withMinIdle(settleIdlePercent / 100.0);
    }
}
