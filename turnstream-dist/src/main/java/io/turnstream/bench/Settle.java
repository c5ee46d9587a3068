package io.turnstream.bench;

import io.turnstream.bench.BenchConfig.Settling;
import io.turnstream.bench.BenchResults.LoadAverage;
import io.turnstream.bench.BenchResults.SettleWait;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Waits before each measured run until the machine has settled, by {@link Settling}'s rule: the CPUs idle for at
 * least {@code minIdle} of the last {@code window}, all cores counted, this process's own threads too (what lingers
 * of the run before, a JIT still compiling, another user's build), with a cap per wait and per bench run. Each wait
 * is recorded with the load average before it.
 *
 * <p>Why the CPUs and not the load average: the 1-minute load average is a moving average with a one-minute time
 * constant. On 2026-11-27 the bench's isolation phase left it at 12.2 when the process exited; the CPUs were 97-99%
 * idle from the next second on while it still read 7.4 half a minute later. A rule on it would wait two minutes for
 * nothing after a busy phase, and not at all for a build that started a few seconds ago.
 */
final class Settle {

    /** How often the CPU counters are read while waiting. */
    static final Duration STEP = Duration.ofMillis(500);
    /** How often a wait prints where it stands. */
    static final Duration REPORT_EVERY = Duration.ofSeconds(10);

    /** What the rule reads, and how it waits; {@link #system()} is the machine's own. */
    interface Machine {
        long nanoTime();

        Instant now();

        int cpus();

        /** The CPU counters now, or null where the system does not say. */
        CpuTimes cpuTimes();

        LoadAverage loadAverage();

        void sleep(Duration duration) throws InterruptedException;
    }

    /**
     * Cumulative CPU time: idle and in total, of all cores, in any one unit ({@code /proc/stat}'s ticks), and this
     * process's own CPU in nanoseconds.
     */
    record CpuTimes(long idle, long total, long processNanos) {
    }

    /** Shares of all cores over one window: idle, and busy in this process. */
    record Shares(double idle, double process) {

        static Shares between(CpuTimes from, CpuTimes to, long nanos, int cpus) {
            long total = to.total() - from.total();
            double idle = total <= 0 ? 1 : (double) (to.idle() - from.idle()) / total;
            double process = nanos <= 0 ? 0 : (double) (to.processNanos() - from.processNanos()) / nanos / cpus;
            return new Shares(clamp(idle), clamp(process));
        }

        private static double clamp(double share) {
            return Math.max(0, Math.min(1, share));
        }
    }

    private record Sample(long nanos, CpuTimes cpu) {
    }

    private final Settling rule;
    private final Machine machine;
    private final PrintWriter progress;
    private final List<SettleWait> waits = new ArrayList<>();
    private long waitedNanos;

    Settle(Settling rule, Machine machine, PrintWriter progress) {
        this.rule = rule;
        this.machine = machine;
        this.progress = progress;
    }

    /** The rule on this machine: {@code /proc/stat}, the JVM's own CPU time, real sleeps. */
    static Settle system(Settling rule, PrintWriter progress) {
        return new Settle(rule, system(), progress);
    }

    /**
     * Before the measured run {@code run}: waits until the machine has settled, or the cap (the rule's
     * {@code maxWait}, or what is left of its budget) has passed, then records the wait.
     */
    void before(String run) throws InterruptedException {
        LoadAverage load = machine.loadAverage();
        Instant at = machine.now().truncatedTo(ChronoUnit.SECONDS);
        CpuTimes first = rule.enabled() ? machine.cpuTimes() : null;
        if (first == null) {
            waits.add(new SettleWait(run, at.toString(), 0, null, null, null, load));
            return;
        }
        long start = machine.nanoTime();
        long cap = Math.max(0, Math.min(rule.maxWait().toNanos(), rule.budget().toNanos() - waitedNanos));
        long window = rule.window().toNanos();
        List<Sample> samples = new ArrayList<>(List.of(new Sample(start, first)));
        long nextReport = start + REPORT_EVERY.toNanos();
        Shares shares;
        boolean settled;
        while (true) {
            machine.sleep(STEP);
            Sample now = new Sample(machine.nanoTime(), machine.cpuTimes());
            if (now.cpu() == null) {
                waits.add(new SettleWait(run, at.toString(), LadderRun.round((now.nanos() - start) / 1e9), null, null,
                        null, load));
                return;
            }
            samples.add(now);
            // the oldest sample kept is the newest one at least a window old
            while (samples.size() > 2 && now.nanos() - samples.get(1).nanos() >= window) {
                samples.remove(0);
            }
            Sample from = samples.get(0);
            if (now.nanos() - from.nanos() < window) {
                continue;
            }
            shares = Shares.between(from.cpu(), now.cpu(), now.nanos() - from.nanos(), machine.cpus());
            long waited = now.nanos() - start;
            settled = shares.idle() >= rule.minIdle();
            if (settled || waited >= cap) {
                break;
            }
            if (now.nanos() >= nextReport) {
                progress.printf(Locale.ROOT, "  waiting for the machine to settle before %s: %s; %.0f s of at most %.0f s%n",
                        run, describe(shares, machine.loadAverage()), waited / 1e9, cap / 1e9);
                progress.flush();
                nextReport += REPORT_EVERY.toNanos();
            }
        }
        long waited = machine.nanoTime() - start;
        waitedNanos += waited;
        SettleWait wait = new SettleWait(run, at.toString(), LadderRun.round(waited / 1e9), settled,
                LadderRun.round(100 * shares.idle()), LadderRun.round(100 * shares.process()), load);
        waits.add(wait);
        if (!settled) {
            progress.printf(Locale.ROOT, "  WARNING %s%n", warning(wait));
        } else if (waited > window + STEP.toNanos()) {
            progress.printf(Locale.ROOT, "  settled before %s after %.0f s: %s%n", run, waited / 1e9,
                    describe(shares, machine.loadAverage()));
        }
        progress.flush();
    }

    /** Every wait so far, in order. */
    List<SettleWait> waits() {
        return List.copyOf(waits);
    }

    /** A warning per measured run that began on a machine that had not settled. */
    List<String> warnings() {
        return waits.stream().filter(w -> Boolean.FALSE.equals(w.settled())).map(this::warning).toList();
    }

    private String warning(SettleWait wait) {
        return String.format(Locale.ROOT, "the machine had not settled before %s: CPUs %.0f%% idle (this process %.0f%%)"
                        + " after waiting %.0f s, %.0f%% wanted; measured anyway", wait.run(), wait.idlePercent(),
                wait.processPercent(), wait.waitedSeconds(), 100 * rule.minIdle());
    }

    private static String describe(Shares shares, LoadAverage load) {
        return String.format(Locale.ROOT, "CPUs %.0f%% idle (this process %.0f%%, others %.0f%%), load average %s",
                100 * shares.idle(), 100 * shares.process(), Math.max(0, 100 * (1 - shares.idle() - shares.process())),
                load.one() == null ? "-" : String.format(Locale.ROOT, "%.2f", load.one()));
    }

    private static Machine system() {
        return new Machine() {
            @Override
            public long nanoTime() {
                return System.nanoTime();
            }

            @Override
            public Instant now() {
                return Instant.now();
            }

            @Override
            public int cpus() {
                return Runtime.getRuntime().availableProcessors();
            }

            @Override
            public CpuTimes cpuTimes() {
                try {
                    return procStat(Files.readAllLines(Path.of("/proc/stat")).get(0), Resources.processCpuNanos());
                } catch (IOException | RuntimeException e) {
                    return null;
                }
            }

            @Override
            public LoadAverage loadAverage() {
                return Resources.loadAverage();
            }

            @Override
            public void sleep(Duration duration) throws InterruptedException {
                Thread.sleep(duration.toMillis());
            }
        };
    }

    /**
     * The first line of {@code /proc/stat} ({@code cpu  user nice system idle iowait irq softirq steal ...}, ticks of
     * all cores): idle is idle and iowait, the total the first eight fields (guest time is counted in user already).
     */
    static CpuTimes procStat(String cpuLine, long processNanos) {
        String[] fields = cpuLine.strip().split("\\s+");
        if (!fields[0].equals("cpu") || fields.length < 5) {
            throw new IllegalArgumentException("not the cpu line of /proc/stat: " + cpuLine);
        }
        long total = 0;
        for (int i = 1; i < Math.min(fields.length, 9); i++) {
            total += Long.parseLong(fields[i]);
        }
        long idle = Long.parseLong(fields[4]) + (fields.length > 5 ? Long.parseLong(fields[5]) : 0);
        return new CpuTimes(idle, total, processNanos);
    }
}
