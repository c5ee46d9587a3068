package io.turnstream.tools;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Which tool-call offsets may be committed. Calls finish out of order, so a partition's committable
 * offset is its lowest unanswered record (or one past the last record read when all are answered):
 * after a crash everything from there is read again, and the ledger skips what was answered.
 */
final class OffsetTracker {

    private static final class Progress {
        final TreeSet<Long> open = new TreeSet<>();
        long next = -1;
        long committed = -1;

        long committable() {
            return open.isEmpty() ? next : open.first();
        }
    }

    private final Map<TopicPartition, Progress> partitions = new HashMap<>();

    void read(RecordPosition position) {
        Progress progress = partitions.computeIfAbsent(position.partition(), p -> new Progress());
        progress.open.add(position.offset());
        progress.next = Math.max(progress.next, position.offset() + 1);
    }

    void answered(RecordPosition position) {
        Progress progress = partitions.get(position.partition());
        if (progress != null) {
            progress.open.remove(position.offset());
        }
    }

    /** Offsets that moved since the last commit. */
    Map<TopicPartition, OffsetAndMetadata> committable() {
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        partitions.forEach((partition, progress) -> {
            long offset = progress.committable();
            if (offset > progress.committed) {
                offsets.put(partition, new OffsetAndMetadata(offset));
            }
        });
        return offsets;
    }

    /**
     * {@code commit} and, for each of {@code partitions} it lacks, the partition's offset as committed last (its
     * committable offset did not move since): a transaction with them has the group check this consumer's ownership
     * of every one of those partitions. A partition with nothing committed yet is always in {@code commit} once read.
     */
    Map<TopicPartition, OffsetAndMetadata> coveringEach(Map<TopicPartition, OffsetAndMetadata> commit,
                                                        Collection<TopicPartition> partitions) {
        Map<TopicPartition, OffsetAndMetadata> covering = new HashMap<>(commit);
        for (TopicPartition partition : partitions) {
            Progress progress = this.partitions.get(partition);
            if (progress != null && progress.committed >= 0) {
                covering.putIfAbsent(partition, new OffsetAndMetadata(progress.committed));
            }
        }
        return covering;
    }

    void committed(Map<TopicPartition, OffsetAndMetadata> offsets) {
        offsets.forEach((partition, offset) -> {
            Progress progress = partitions.get(partition);
            if (progress != null) {
                progress.committed = Math.max(progress.committed, offset.offset());
            }
        });
    }

    /** The last committed offset of each partition, for pruning the ledger. */
    Map<TopicPartition, Long> lastCommitted() {
        Map<TopicPartition, Long> offsets = new HashMap<>();
        partitions.forEach((partition, progress) -> {
            if (progress.committed >= 0) {
                offsets.put(partition, progress.committed);
            }
        });
        return offsets;
    }

    void forget(Collection<TopicPartition> revoked) {
        revoked.forEach(partitions::remove);
    }

    void clear() {
        partitions.clear();
    }
}
