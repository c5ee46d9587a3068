package io.turnstream.topology;

import java.util.function.LongSupplier;

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
 * <p>Fresh means the last record read is at most {@link TopologyConfig.CommitPacing#behindAfterMs()}
 * older than the wall clock, by its timestamp (the gateway producer's send time). A plain state
 * machine with injected time; {@link UpsertProcessor} feeds it records and commits and asks it
 * whether a commit is due.
 */
final class CommitPacer {

    private final long intervalMs;
    private final long behindAfterMs;
    private final LongSupplier clock;
    private long lastCommitMs;
    private boolean behind;

    CommitPacer(TopologyConfig.CommitPacing pacing, LongSupplier clock) {
        this.intervalMs = pacing.intervalMs();
        this.behindAfterMs = pacing.behindAfterMs();
        this.clock = clock;
        this.lastCommitMs = clock.getAsLong();
    }

    /** A record with this timestamp is processed: it tells whether the input is fresh or behind. */
    void onRecord(long timestampMs) {
        behind = clock.getAsLong() - timestampMs > behindAfterMs;
    }

    /** The task commits (whoever asked for it: this pacer, or Kafka Streams' own interval). */
    void onCommit() {
        lastCommitMs = clock.getAsLong();
    }

    /** Whether to ask for a commit now: the input is fresh and the latency interval has passed since the last commit. */
    boolean commitDue() {
        return !behind && clock.getAsLong() - lastCommitMs >= intervalMs;
    }
}
