package io.turnstream.topology;

/**
 * How many tasks of one stream thread are reading input that is behind the wall clock. Kafka Streams commits
 * every task of a thread together, whichever task asked, so whether to ask for the latency interval's commits
 * is the thread's question, not a task's: a task whose input is fresh (or one that has none) asking while
 * another works through a backlog made the thread commit as often as a commit could go, and when a commit takes
 * longer than the interval Kafka Streams processes one record per task between two commits (its
 * {@code numIterations} halves after every iteration that committed). On a loaded cluster that was a few
 * records a second, and the thread polled again only once every record it held was processed, so the
 * partitions it had not yet received records from got none for a minute (docs/benchmarks.md, "A dead
 * instance's partitions with no committed offset").
 *
 * <p>One per stream thread ({@link #ofCurrentThread()}); only that thread's tasks touch it.
 */
final class BehindTasks {

    private static final ThreadLocal<BehindTasks> OF_THREAD = ThreadLocal.withInitial(BehindTasks::new);

    private int count;

    /** The calling stream thread's. */
    static BehindTasks ofCurrentThread() {
        return OF_THREAD.get();
    }

    void add() {
        count++;
    }

    void remove() {
        count--;
    }

    boolean any() {
        return count > 0;
    }
}
