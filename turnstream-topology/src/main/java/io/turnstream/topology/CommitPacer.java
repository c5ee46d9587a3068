package io.turnstream.topology;

import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * When a task asks Kafka Streams for a commit: a commit interval that follows the input. Under
 * exactly-once an upsert is visible only after the commit that follows it, so while the input is
 * fresh the topology commits every {@link TopologyConfig.CommitPacing#intervalMs()} (the emit latency).
 * But a commit costs a round trip of fixed price (the producer's flush, the transaction's markers),
 * and a topology that has fallen behind its input (a survivor with a dead instance's backlog, a
 * saturated machine) gets more through with fewer, larger transactions: then it does not ask, and
 * Kafka Streams commits at its own, longer {@code commit.interval.ms}
 * ({@link TopologyConfig.CommitPacing#behindIntervalMs()}).
 *
 * <p>Behind means the last record the task read is more than {@link TopologyConfig.CommitPacing#behindAfterMs()}
 * older than the wall clock, by its timestamp (the gateway producer's send time); a task that read nothing
 * between two ticks has caught up (its queue is empty) and is no longer behind. A commit covers every task
 * of the stream thread, so no task asks while any task of its thread is behind ({@link BehindTasks}), and a
 * task asks only for what it read or wrote since the last commit: one with no input of its own has nothing
 * to make visible sooner. A plain state machine with injected time; {@link UpsertProcessor} feeds it
 * records, output, ticks and commits and asks it whether a commit is due.
 */
final class CommitPacer {

    private final long intervalMs;
    private final long behindAfterMs;
    private final LongSupplier clock;
    private final Supplier<BehindTasks> threadOf;
    /** The stream thread's, taken at the first record or tick: the thread that runs this task. */
    private BehindTasks thread;
    private long lastCommitMs;
    private boolean behind;
    /** A record read or output written since the last commit. */
    private boolean uncommitted;
    private boolean readSinceTick;

    CommitPacer(TopologyConfig.CommitPacing pacing, LongSupplier clock, Supplier<BehindTasks> threadOf) {
        this.intervalMs = pacing.intervalMs();
        this.behindAfterMs = pacing.behindAfterMs();
        this.clock = clock;
        this.threadOf = threadOf;
        this.lastCommitMs = clock.getAsLong();
    }

    /** A record with this timestamp is processed: it tells whether the input is fresh or behind. */
    void onRecord(long timestampMs) {
        uncommitted = true;
        readSinceTick = true;
        setBehind(clock.getAsLong() - timestampMs > behindAfterMs);
    }

    /** The task wrote output (from its tick: a record's output is the record's). */
    void onOutput() {
        uncommitted = true;
    }

    /** The task's tick: if it read nothing since the last one, its queue is empty and it is not behind. */
    void onTick() {
        if (!readSinceTick) {
            setBehind(false);
        }
        readSinceTick = false;
    }

    /** The task commits (whoever asked for it: this pacer, another task's, or Kafka Streams' own interval). */
    void onCommit() {
        lastCommitMs = clock.getAsLong();
        uncommitted = false;
    }

    /**
     * Whether to ask for a commit now: the task read or wrote something since the last commit, no task of its
     * thread is behind, and the latency interval has passed since the last commit.
     */
    boolean commitDue() {
        return uncommitted && !thread().any() && clock.getAsLong() - lastCommitMs >= intervalMs;
    }

    /** The task is closed: it is behind no more. */
    void close() {
        setBehind(false);
    }

    private void setBehind(boolean nowBehind) {
        if (nowBehind == behind) {
            return;
        }
        behind = nowBehind;
        if (nowBehind) {
            thread().add();
        } else {
            thread().remove();
        }
    }

    private BehindTasks thread() {
        if (thread == null) {
            thread = threadOf.get();
        }
        return thread;
    }
}
