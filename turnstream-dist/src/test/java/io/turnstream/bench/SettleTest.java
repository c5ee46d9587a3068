package io.turnstream.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.turnstream.bench.BenchConfig.Settling;
import io.turnstream.bench.BenchResults.LoadAverage;
import io.turnstream.bench.BenchResults.SettleWait;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.function.LongToDoubleFunction;
import org.junit.jupiter.api.Test;

/**
 * The settle rule on a simulated machine: time moves only when the rule sleeps, and the CPUs' busy share is a
 * function of that time, so every case is exact and nothing really waits.
 */
class SettleTest {

    private static final Settling RULE = new Settling(Duration.ofSeconds(2), 0.8, Duration.ofSeconds(60),
            Duration.ofSeconds(90));

    @Test
    void aQuietMachineIsSettledAfterOneWindowAndNothingIsPrinted() throws InterruptedException {
        SimulatedMachine machine = new SimulatedMachine(t -> 0.05, t -> 0.03);
        StringWriter out = new StringWriter();
        Settle settle = new Settle(RULE, machine, new PrintWriter(out));

        settle.before("flood pair 1, topology");

        SettleWait wait = settle.waits().get(0);
        assertThat(wait.run()).isEqualTo("flood pair 1, topology");
        assertThat(wait.waitedSeconds()).isEqualTo(2.0);
        assertThat(wait.settled()).isTrue();
        assertThat(wait.idlePercent()).isEqualTo(95.0);
        assertThat(wait.processPercent()).isEqualTo(3.0);
        assertThat(wait.load().one()).isEqualTo(machine.load);
        assertThat(wait.at()).isEqualTo(SimulatedMachine.START.toString());
        assertThat(out.toString()).isEmpty();
        assertThat(settle.warnings()).isEmpty();
    }

    @Test
    void aBusyPhaseThatEndsIsWaitedOutToTheFirstWholeQuietWindowWithProgress() throws InterruptedException {
        // the run before still loads both cores for 25 s (what lingers of it, or a build), then the machine is quiet
        SimulatedMachine machine = new SimulatedMachine(t -> t < 25e9 ? 1.0 : 0.1, t -> t < 25e9 ? 0.5 : 0.05);
        StringWriter out = new StringWriter();
        Settle settle = new Settle(RULE, machine, new PrintWriter(out));

        settle.before("ladder 1000 turns, topology 1");

        SettleWait wait = settle.waits().get(0);
        assertThat(wait.settled()).isTrue();
        // the first window that begins at the quiet's start ends 2 s after it
        assertThat(wait.waitedSeconds()).isEqualTo(27.0);
        assertThat(wait.idlePercent()).isEqualTo(90.0);
        assertThat(out.toString()).contains(
                "waiting for the machine to settle before ladder 1000 turns, topology 1: CPUs 0% idle (this process 50%, "
                        + "others 50%), load average 4.00; 10 s of at most 60 s",
                "; 20 s of at most 60 s",
                "settled before ladder 1000 turns, topology 1 after 27 s: CPUs 90% idle");
        assertThat(settle.warnings()).isEmpty();
    }

    @Test
    void aMachineThatStaysBusyIsMeasuredAnywayAfterTheCapWithAWarning() throws InterruptedException {
        SimulatedMachine machine = new SimulatedMachine(t -> 0.6, t -> 0.1);
        StringWriter out = new StringWriter();
        Settle settle = new Settle(RULE, machine, new PrintWriter(out));

        settle.before("isolation pair 1, idle");

        SettleWait wait = settle.waits().get(0);
        assertThat(wait.settled()).isFalse();
        assertThat(wait.waitedSeconds()).isEqualTo(60.0);
        assertThat(wait.idlePercent()).isEqualTo(40.0);
        assertThat(settle.warnings()).containsExactly("the machine had not settled before isolation pair 1, idle: CPUs "
                + "40% idle (this process 10%) after waiting 60 s, 80% wanted; measured anyway");
        assertThat(out.toString()).contains("WARNING the machine had not settled before isolation pair 1, idle");
    }

    @Test
    void theBudgetBoundsAllWaitsOfARunThenEachRunOnlyRecordsOneWindow() throws InterruptedException {
        SimulatedMachine machine = new SimulatedMachine(t -> 0.6, t -> 0.1);
        Settle settle = new Settle(RULE, machine, new PrintWriter(new StringWriter()));

        settle.before("run 1");
        settle.before("run 2");
        settle.before("run 3");

        // 60 s, then the 30 s left of the 90 s budget, then one window
        assertThat(settle.waits()).extracting(SettleWait::waitedSeconds).containsExactly(60.0, 30.0, 2.0);
        assertThat(settle.warnings()).hasSize(3);
    }

    @Test
    void withoutWaitingOnlyTheLoadIsRecorded() throws InterruptedException {
        SimulatedMachine machine = new SimulatedMachine(t -> 1.0, t -> 1.0);
        Settle settle = new Settle(Settling.OFF, machine, new PrintWriter(new StringWriter()));

        settle.before("flood pair 1, topology");

        assertThat(settle.waits()).singleElement().satisfies(wait -> {
            assertThat(wait.waitedSeconds()).isZero();
            assertThat(wait.settled()).isNull();
            assertThat(wait.idlePercent()).isNull();
            assertThat(wait.load().one()).isEqualTo(machine.load);
        });
        assertThat(machine.nanos).isZero();
        assertThat(settle.warnings()).isEmpty();
    }

    @Test
    void aSystemThatDoesNotSayItsCpuTimesIsNotWaitedFor() throws InterruptedException {
        SimulatedMachine machine = new SimulatedMachine(t -> 1.0, t -> 1.0);
        machine.cpuTimesKnown = false;
        Settle settle = new Settle(RULE, machine, new PrintWriter(new StringWriter()));

        settle.before("ladder 50 turns, topology 1");

        assertThat(settle.waits()).singleElement().satisfies(wait -> assertThat(wait.settled()).isNull());
        assertThat(machine.nanos).isZero();
    }

    @Test
    void procStatCountsIdleAndIowaitAsIdleAndTheFirstEightFieldsAsTheTotal() {
        Settle.CpuTimes times = Settle.procStat("cpu  4705 150 1120 16250 520 0 30 5 7 0", 42);

        assertThat(times.idle()).isEqualTo(16_770);
        assertThat(times.total()).isEqualTo(4705 + 150 + 1120 + 16250 + 520 + 30 + 5);
        assertThat(times.processNanos()).isEqualTo(42);
        assertThatThrownBy(() -> Settle.procStat("cpu0 1 2 3 4", 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aRuleOutsideItsBoundsIsRefused() {
        assertThatThrownBy(() -> RULE.withMinIdle(0)).hasMessageContaining("over 0% and at most 100%, got 0%");
        assertThatThrownBy(() -> RULE.withMinIdle(1.5)).hasMessageContaining("got 150%");
        assertThatThrownBy(() -> RULE.withMaxWait(Duration.ofSeconds(-1))).hasMessageContaining("cannot be negative");
        assertThat(RULE.withMaxWait(Duration.ZERO).enabled()).isFalse();
    }

    /**
     * Two cores whose busy share and this process's share of them are functions of the time since the start; time
     * advances only in {@link #sleep}, in steps of 10 ms, and the counters integrate the shares over it.
     */
    private static final class SimulatedMachine implements Settle.Machine {
        static final Instant START = Instant.parse("2026-11-27T16:00:00Z");
        private static final long TICK = 10_000_000;
        private static final int CPUS = 2;

        final double load = 4.0;
        long nanos;
        boolean cpuTimesKnown = true;
        private final LongToDoubleFunction busy;
        private final LongToDoubleFunction process;
        private double idleTicks;
        private double totalTicks;
        private double processNanos;

        SimulatedMachine(LongToDoubleFunction busy, LongToDoubleFunction process) {
            this.busy = busy;
            this.process = process;
        }

        @Override
        public long nanoTime() {
            return nanos;
        }

        @Override
        public Instant now() {
            return START.plusNanos(nanos);
        }

        @Override
        public int cpus() {
            return CPUS;
        }

        @Override
        public Settle.CpuTimes cpuTimes() {
            return cpuTimesKnown ? new Settle.CpuTimes(Math.round(idleTicks), Math.round(totalTicks),
                    Math.round(processNanos)) : null;
        }

        @Override
        public LoadAverage loadAverage() {
            return new LoadAverage(load, 3.0, 2.0);
        }

        @Override
        public void sleep(Duration duration) {
            for (long end = nanos + duration.toNanos(); nanos < end; nanos += TICK) {
                totalTicks += CPUS;
                idleTicks += CPUS * (1 - busy.applyAsDouble(nanos));
                processNanos += CPUS * TICK * process.applyAsDouble(nanos);
            }
        }
    }
}
