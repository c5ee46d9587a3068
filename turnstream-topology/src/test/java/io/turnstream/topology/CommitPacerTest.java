package io.turnstream.topology;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * When a task asks for a commit: at the latency interval while its input is fresh, never while it or another task
 * of its stream thread is behind, never for nothing.
 */
class CommitPacerTest {

    private static final TopologyConfig.CommitPacing PACING = new TopologyConfig.CommitPacing(75, 500, 1_000, true);

    private final AtomicLong clock = new AtomicLong(10_000);
    private final BehindTasks thread = new BehindTasks();
    private final CommitPacer pacer = new CommitPacer(PACING, clock::get, () -> thread);
    private final CommitPacer otherTask = new CommitPacer(PACING, clock::get, () -> thread);

    @Test
    void whileTheInputIsFreshACommitIsDueOnceTheLatencyIntervalHasPassedSinceTheLast() {
        pacer.onRecord(clock.get() - 20);
        assertThat(pacer.commitDue()).isFalse();

        clock.addAndGet(74);
        assertThat(pacer.commitDue()).isFalse();
        clock.addAndGet(1);
        assertThat(pacer.commitDue()).isTrue();

        pacer.onCommit();
        pacer.onRecord(clock.get() - 20);
        assertThat(pacer.commitDue()).isFalse();
        clock.addAndGet(75);
        assertThat(pacer.commitDue()).isTrue();
    }

    @Test
    void aCommitKafkaStreamsMadeOnItsOwnCountsAsTheLast() {
        pacer.onRecord(clock.get());
        clock.addAndGet(60);
        pacer.onCommit();
        clock.addAndGet(60);

        assertThat(pacer.commitDue()).isFalse();
    }

    @Test
    void whileTheRecordsAreOlderThanTheThresholdNoCommitIsAskedForKafkaStreamsLongerIntervalCommits() {
        pacer.onRecord(clock.get() - 1_001);
        clock.addAndGet(10_000);

        assertThat(pacer.commitDue()).isFalse();
    }

    @Test
    void aRecordAtTheThresholdIsStillFresh() {
        pacer.onRecord(clock.get() - 1_000);
        clock.addAndGet(75);

        assertThat(pacer.commitDue()).isTrue();
    }

    @Test
    void caughtUpTheNextFreshRecordMakesTheLatencyIntervalCountAgain() {
        pacer.onRecord(clock.get() - 30_000);
        clock.addAndGet(400);
        assertThat(pacer.commitDue()).isFalse();

        pacer.onRecord(clock.get() - 50);

        assertThat(pacer.commitDue()).isTrue();
    }

    @Test
    void fallingBehindStopsTheAskingAtOnce() {
        pacer.onRecord(clock.get());
        clock.addAndGet(100);
        assertThat(pacer.commitDue()).isTrue();

        pacer.onRecord(clock.get() - 5_000);

        assertThat(pacer.commitDue()).isFalse();
    }

    @Test
    void nothingReadNorWrittenSinceTheLastCommitAsksForNone() {
        clock.addAndGet(1_000);
        pacer.onTick();
        assertThat(pacer.commitDue()).isFalse();

        pacer.onOutput();
        assertThat(pacer.commitDue()).as("the tick wrote output").isTrue();
    }

    @Test
    void anotherTaskOfTheThreadBehindHoldsTheAskingUntilItReadsFreshInputOrNothing() {
        otherTask.onRecord(clock.get() - 5_000);
        pacer.onRecord(clock.get());
        clock.addAndGet(100);
        assertThat(pacer.commitDue()).isFalse();

        otherTask.onTick();
        assertThat(pacer.commitDue()).as("it read a record since its last tick").isFalse();
        otherTask.onRecord(clock.get() - 10);
        assertThat(pacer.commitDue()).as("fresh again").isTrue();

        otherTask.onRecord(clock.get() - 5_000);
        otherTask.onTick();
        otherTask.onTick();
        assertThat(pacer.commitDue()).as("nothing read between two ticks: caught up").isTrue();
    }

    @Test
    void aTaskClosedBehindLeavesTheThreadFresh() {
        otherTask.onRecord(clock.get() - 5_000);
        pacer.onRecord(clock.get());
        clock.addAndGet(100);

        otherTask.close();

        assertThat(pacer.commitDue()).isTrue();
    }
}
