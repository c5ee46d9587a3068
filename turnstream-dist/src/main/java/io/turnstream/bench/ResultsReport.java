package io.turnstream.bench;

import io.turnstream.bench.BenchResults.Amplification;
import io.turnstream.bench.BenchResults.Figure;
import io.turnstream.bench.BenchResults.FloodResult;
import io.turnstream.bench.BenchResults.LadderStep;
import io.turnstream.bench.BenchResults.StepPairs;
import io.turnstream.bench.BenchResults.Target;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** The markdown tables of a run, the figures with their spread first; {@code docs/benchmarks.md} embeds them. */
final class ResultsReport {

    private ResultsReport() {
    }

    static String markdown(BenchResults r) {
        StringBuilder md = new StringBuilder();
        BenchResults.Machine m = r.machine();
        md.append(String.format(Locale.ROOT, "Run of %s: %d cpus, %,d MB memory, %s, %s, Kafka %s, max heap %,d MB; %.0f s.%n%n",
                m.startedAt(), m.cpus(), m.memoryBytes() >> 20, m.jdk(), m.os(), m.kafka(), m.maxHeapBytes() >> 20,
                r.durationSeconds()));
        BenchResults.RunSettings s = r.settings();
        md.append(String.format(Locale.ROOT, "Settings: %s, commit interval %d ms%s, %d partitions, %d tokens/s per turn in deltas "
                        + "of %d tokens, reasoning %s and message %s tokens per turn, warm-up %.0f s, window %.0f s, "
                        + "flood %,d events, growth rule %.2f, --config overrides %s.%n%n",
                s.processingGuarantee(), s.commitIntervalMs(), behindInterval(s), s.partitions(), s.tokensPerSecond(), s.tokensPerDelta(),
                s.reasoningTokens(), s.messageTokens(), s.warmupSeconds(), s.measureSeconds(), s.floodEvents(),
                s.growthFraction(), s.kafkaOverrides().isEmpty() ? "none" : s.kafkaOverrides()));

        md.append(String.format(Locale.ROOT, "Phases: %s; %d interleaved pairs per comparison%s; %d amplification runs; "
                        + "targets judged at %d turns. Load average (1 / 5 / 15 min) %s before, %s after.%n%n",
                String.join(", ", s.phases()), s.pairs(), pairsPerStep(s), s.amplificationRuns(), s.targetStep(),
                load(r.loadBefore()), load(r.loadAfter())));
        for (String warning : r.warnings()) {
            md.append("**Warning, ").append(warning).append(".**\n\n");
        }

        md.append("### Figures: median and spread\n\n");
        md.append("Ratios are medians of the per-pair ratios (topology and baseline run alternately, each pair on "
                + "fresh topics). Range is min-max of the runs, IQR the interquartile range.\n\n");
        md.append(figures(r.figures()));

        md.append("\n### Targets (judged on the median)\n\n");
        List<List<String>> targets = new ArrayList<>();
        for (Target t : r.targets()) {
            targets.add(List.of(t.name(), t.target(), t.measured(), (t.met() ? "met" : "**missed**")
                    + (t.clear() ? "" : " on the median; the range spans the target")));
        }
        md.append(table(List.of("target", "wanted", "measured", ""), targets));

        if (!r.flood().isEmpty()) {
            md.append("\n### Flood: as fast as possible, same raw events, same broker, pair by pair\n\n");
            List<List<String>> flood = new ArrayList<>();
            for (FloodResult f : r.flood()) {
                flood.add(List.of(Integer.toString(f.pair()), f.app(), String.format(Locale.ROOT, "%,d", f.events()),
                        String.format(Locale.ROOT, "%,.0f", f.eventsPerSec()), String.format(Locale.ROOT, "%,d", f.outputRecords()),
                        String.format(Locale.ROOT, "%,.0f", f.outputPerSec()),
                        String.format(Locale.ROOT, "%.1f", f.appCpuMsPer1000Events()),
                        String.format(Locale.ROOT, "%,.0f / %,.0f", f.jitMs(), f.gcMs()),
                        f.producerRetries() == null ? "" : String.format(Locale.ROOT, "%,d", f.producerRetries())));
            }
            md.append(table(List.of("pair", "reader", "raw events", "raw events/s", "output records", "output/s",
                    "CPU ms per 1,000 events", "JIT / GC ms in the window", "records sent again"), flood));
        }

        if (!r.ladder().isEmpty()) {
            md.append("\n### Load ladder, pair by pair: paced turns, latency to a read_committed consumer (ms)\n\n");
            md.append(ladderTable(r.ladder(), r.settings().latencyTargetMs()));
            if (r.settings().phases().contains(BenchConfig.Phase.LADDER.toString())) {
                md.append(String.format(Locale.ROOT, "%nLargest step sustained (median emit p99 under the target, every delta "
                                + "shown in every run): %s.%n",
                        r.largestSustainedStep() == null ? "none" : r.largestSustainedStep() + " turns"));
            }
            md.append("\n### Live text: content latency through `llm.item-appends` (ms), the topology's runs\n\n");
            List<List<String>> appends = new ArrayList<>();
            for (StepPairs step : r.ladder()) {
                for (int i = 0; i < step.topology().size(); i++) {
                    LadderStep l = step.topology().get(i);
                    appends.add(List.of(Integer.toString(l.turns()), Integer.toString(i + 1), latency(l.appendLatency()),
                            latency(l.contentLatency()), l.appendBytesPerContentByte() == null ? "n/a"
                                    : String.format(Locale.ROOT, "%.2fx", l.appendBytesPerContentByte())));
                }
            }
            md.append(table(List.of("turns", "run", "content through appends p50/p95/p99/max",
                    "content through upserts p50/p95/p99/max", "append bytes / content bytes"), appends));
        }

        if (!r.amplification().isEmpty()) {
            md.append("\n### Write amplification\n\n");
        }
        List<List<String>> amp = new ArrayList<>();
        for (Amplification a : r.amplification()) {
            amp.add(List.of(Integer.toString(a.run()), a.gradient(), String.format(Locale.ROOT, "%,d", a.tokens()), String.format(Locale.ROOT, "%,d", a.contentBytes()),
                    Long.toString(a.upserts()), String.format(Locale.ROOT, "%,d", a.upsertBytes()),
                    String.format(Locale.ROOT, "%.2fx", a.upsertAmplification()),
                    String.format(Locale.ROOT, "%,d", a.changelogRecordBytes()), String.format(Locale.ROOT, "%.2fx", a.changelogRatio()),
                    String.format(Locale.ROOT, "%,d", a.changelogDiskBytes()), String.format(Locale.ROOT, "%.2fx", a.changelogDiskRatio())));
        }
        if (!amp.isEmpty()) {
            md.append(table(List.of("run", "gradient", "item tokens", "content bytes", "upserts", "upsert bytes", "upsert / content",
                    "changelog record bytes", "changelog / content", "changelog disk bytes", "disk / content"), amp));
        }

        if (!r.memory().isEmpty()) {
            md.append("\n### Memory, each topology run at the largest step\n\n");
            List<List<String>> rows = new ArrayList<>();
            for (BenchResults.Memory mem : r.memory()) {
                rows.add(List.of(Integer.toString(mem.run()), Integer.toString(mem.openTurns()), mb(mem.heapIdleBytes()),
                        mb(mem.heapOpenBytes()), String.format(Locale.ROOT, "%.1f", mem.heapPerOpenTurnBytes() / 1024.0),
                        mb(mem.rocksDbBytes()), mem.rocksDb().entrySet().stream()
                                .map(e -> e.getKey() + " " + mb(e.getValue())).collect(Collectors.joining(", "))));
            }
            md.append(table(List.of("run", "open turns", "heap idle (MB)", "heap open (MB)", "heap per open turn (KB)",
                    "RocksDB (MB)", "RocksDB detail (MB)"), rows));
        }
        if (r.settling() != null && !r.settling().isEmpty()) {
            md.append("\n### Before each measured run: waiting for the machine to settle\n\n");
            md.append(settling(r.settling()));
        }
        return md.toString();
    }

    /** A summary line, then one row per measured run: when it began, the wait, the CPUs over its last window, the load. */
    static String settling(List<BenchResults.SettleWait> waits) {
        long unsettled = waits.stream().filter(w -> Boolean.FALSE.equals(w.settled())).count();
        double waited = waits.stream().mapToDouble(BenchResults.SettleWait::waitedSeconds).sum();
        StringBuilder md = new StringBuilder(String.format(Locale.ROOT,
                "%d measured runs, %.0f s of waiting in all, %d begun on a machine that had not settled; CPUs idle and "
                        + "this process: shares of all cores over the wait's last window.%n%n", waits.size(), waited, unsettled));
        List<List<String>> rows = new ArrayList<>();
        for (BenchResults.SettleWait w : waits) {
            rows.add(List.of(w.run(), w.at(), String.format(Locale.ROOT, "%.1f", w.waitedSeconds()),
                    w.settled() == null ? "not waited" : w.settled() ? "yes" : "**no**", percent(w.idlePercent()),
                    percent(w.processPercent()), load(w.load())));
        }
        return md.append(table(List.of("before", "at", "waited (s)", "settled", "CPUs idle", "this process",
                "load average 1 / 5 / 15 min"), rows)).toString();
    }

    private static String percent(Double value) {
        return value == null ? "-" : String.format(Locale.ROOT, "%.0f%%", value);
    }

    /** One row per figure: its median, range, how far the range reaches from the median, IQR and runs. */
    static String figures(List<Figure> figures) {
        List<List<String>> rows = new ArrayList<>();
        for (Figure f : figures) {
            Spread sp = f.spread();
            boolean one = sp.runs() == 1;
            rows.add(List.of(f.name(), Figures.number(sp.median(), f.unit()), one ? "" : Figures.range(sp, f.unit()),
                    one ? "" : String.format(Locale.ROOT, "-%.0f%% / +%.0f%%", sp.below() * 100, sp.above() * 100),
                    one ? "" : Figures.number(sp.q1(), f.unit()) + "-" + Figures.number(sp.q3(), f.unit()),
                    Integer.toString(sp.runs())));
        }
        return table(List.of("figure", "median", "range", "range around the median", "IQR", "runs"), rows);
    }

    /** The topology's commit interval while behind its input, when its commits follow the input. */
    private static String behindInterval(BenchResults.RunSettings s) {
        return s.commitBehindIntervalMs() == null ? ""
                : String.format(Locale.ROOT, " (%d ms while the input is more than %,d ms old)",
                        s.commitBehindIntervalMs(), s.commitBehindAfterMs());
    }

    /** " (3 at 1000 turns)" where a step runs fewer pairs than the others. */
    private static String pairsPerStep(BenchResults.RunSettings s) {
        String fewer = s.pairsPerStep().entrySet().stream().filter(e -> e.getValue() != s.pairs())
                .map(e -> e.getValue() + " at " + e.getKey() + " turns").collect(Collectors.joining(", "));
        return fewer.isEmpty() ? "" : " (" + fewer + ")";
    }

    /** Every run of every step, pair by pair: topology, then pass-through. */
    private static String ladderTable(List<StepPairs> steps, long targetMs) {
        List<List<String>> rows = new ArrayList<>();
        for (StepPairs step : steps) {
            for (int i = 0; i < step.topology().size(); i++) {
                rows.add(ladderRow(i + 1, step.topology().get(i)));
                if (i < step.passThrough().size()) {
                    rows.add(ladderRow(i + 1, step.passThrough().get(i)));
                }
            }
        }
        return table(List.of("turns", "pair", "app", "offered deltas/s", "sent ev/s", "upserts/s", "emit p50/p95/p99/max",
                "content p50/p95/p99/max", "deltas never shown", "producer lag ms", "CPU ms/1,000 ev app / process",
                "records sent again", "GC ms", "emit p99 < " + targetMs + " ms"), rows);
    }

    private static List<String> ladderRow(int pair, LadderStep l) {
        return List.of(Integer.toString(l.turns()), Integer.toString(pair), l.app(),
                String.format(Locale.ROOT, "%,.0f", l.offeredEventsPerSec()),
                String.format(Locale.ROOT, "%,.0f", l.sentEventsPerSec()), String.format(Locale.ROOT, "%,.0f", l.upsertsPerSec()),
                latency(l.emitLatency()), latency(l.contentLatency()), Long.toString(l.owedDeltas()),
                String.format(Locale.ROOT, "%.0f", l.producerLagMs()),
                String.format(Locale.ROOT, "%.1f / %.1f", l.appCpuMsPer1000Events(), l.processCpuMsPer1000Events()),
                l.producerRetries() == null ? "" : String.format(Locale.ROOT, "%,d", l.producerRetries()),
                l.gcMs() == null ? "" : String.format(Locale.ROOT, "%,d", l.gcMs()),
                l.app().equals("topology") ? (l.sustained() ? "yes" : "no") : "");
    }

    /** "1.26 / 0.59 / 0.22", dashes where the system does not say. */
    static String load(BenchResults.LoadAverage load) {
        return Stream.of(load.one(), load.five(), load.fifteen())
                .map(v -> v == null ? "-" : String.format(Locale.ROOT, "%.2f", v)).collect(Collectors.joining(" / "));
    }

    private static String latency(Percentiles p) {
        return String.format(Locale.ROOT, "%.0f / %.0f / %.0f / %.0f", p.p50(), p.p95(), p.p99(), p.max());
    }

    private static String mb(long bytes) {
        return String.format(Locale.ROOT, "%.1f", bytes / 1048576.0);
    }

    static String table(List<String> header, List<List<String>> rows) {
        StringBuilder md = new StringBuilder();
        md.append("| ").append(String.join(" | ", header)).append(" |\n");
        md.append("|").append("---|".repeat(header.size())).append("\n");
        for (List<String> row : rows) {
            md.append("| ").append(String.join(" | ", row)).append(" |\n");
        }
        return md.toString();
    }
}
