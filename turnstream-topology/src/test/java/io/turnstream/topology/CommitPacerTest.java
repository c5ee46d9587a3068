package io.turnstream.topology;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** When a task asks for a commit: at the latency interval while its input is fresh, never while it is behind. */
class CommitPacerTest {

    private static final TopologyConfig.CommitPacing PACING = new TopologyConfig.CommitPacing(75, 500, 1_000, true);

    private final AtomicLong clock = new AtomicLong(10_000);
    private final CommitPacer pacer = new CommitPacer(PACING, clock::get);

    @Test
    void whileTheInputIsFreshACommitIsDueOnceTheLatencyIntervalHasPassedSinceTheLast() {
        pacer.onRecord(clock.get() - 20);
        assertThat(pacer.commitDue()).isFalse();

        clock.addAndGet(74);
        assertThat(pacer.commitDue()).isFalse();
        clock.addAndGet(1);
        assertThat(pacer.commitDue()).isTrue();

        pacer.onCommit();
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
}
