package io.turnstream.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** Which tool-call offsets a transaction commits. */
class OffsetTrackerTest {

    private static final TopicPartition P0 = new TopicPartition("llm.tool-calls", 0);
    private static final TopicPartition P1 = new TopicPartition("llm.tool-calls", 1);

    private final OffsetTracker offsets = new OffsetTracker();

    @Test
    void aPartitionCommitsItsLowestUnansweredRecord() {
        offsets.read(new RecordPosition(P0, 4));
        offsets.read(new RecordPosition(P0, 5));
        offsets.answered(new RecordPosition(P0, 5));

        assertThat(offsets.committable()).containsExactlyEntriesOf(Map.of(P0, new OffsetAndMetadata(4)));
    }

    /** A transaction published again carries an offset of every partition of its items, so the group checks each. */
    @Test
    void coveringEachAddsTheLastCommittedOffsetOfEveryPartitionWhoseOffsetDidNotMove() {
        offsets.read(new RecordPosition(P0, 4));
        offsets.read(new RecordPosition(P1, 7));
        offsets.committed(offsets.committable());
        offsets.read(new RecordPosition(P0, 5));
        offsets.answered(new RecordPosition(P0, 5));
        offsets.answered(new RecordPosition(P1, 7));
        Map<TopicPartition, OffsetAndMetadata> commit = offsets.committable();
        assertThat(commit).as("P0's lowest unanswered record is still 4").containsOnlyKeys(P1);

        assertThat(offsets.coveringEach(commit, List.of(P0, P1))).containsExactlyInAnyOrderEntriesOf(Map.of(
                P0, new OffsetAndMetadata(4), P1, new OffsetAndMetadata(8)));
    }
}
