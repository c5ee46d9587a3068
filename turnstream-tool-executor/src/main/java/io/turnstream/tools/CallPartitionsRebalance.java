package io.turnstream.tools;

import io.turnstream.runtime.GrouplessConsumer;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Tool-call partitions moving between executor instances: a revoked partition's calls stop and what was
 * answered is published while it is still ours; a newly assigned one gets its ledger marks restored (and so does
 * every partition after the executor's producer was fenced, see {@link ToolExecutorService}).
 */
final class CallPartitionsRebalance implements ConsumerRebalanceListener {

    private final ToolScheduler scheduler;
    private final ResultOutbox outbox;
    private final CallLedger ledger;
    private final OffsetTracker offsets;
    private final CommittedPositions committed;
    private final GrouplessConsumer ledgerReader;
    private final Runnable flush;

    /** @param flush publishes what is ready now, in the executor's loop */
    CallPartitionsRebalance(ToolScheduler scheduler, ResultOutbox outbox, CallLedger ledger, OffsetTracker offsets,
                            CommittedPositions committed, GrouplessConsumer ledgerReader, Runnable flush) {
        this.scheduler = scheduler;
        this.outbox = outbox;
        this.ledger = ledger;
        this.offsets = offsets;
        this.committed = committed;
        this.ledgerReader = ledgerReader;
        this.flush = flush;
    }

    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
        if (!partitions.isEmpty()) {
            // stop first, so nothing starts that the new owner would have to call "outcome unknown";
            // then publish what was answered while these partitions are still ours
            scheduler.dropPartitions(partitions);
            flush.run();
            forget(partitions);
        }
    }

    @Override
    public void onPartitionsLost(Collection<TopicPartition> partitions) {
        forget(partitions);
    }

    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
        restoreLedger(partitions);
    }

    /** Reads the ledger marks of these partitions again, from their committed offsets on, as a newly assigned owner does. */
    void restoreLedger(Collection<TopicPartition> partitions) {
        if (partitions.isEmpty()) {
            return;
        }
        Map<TopicPartition, Long> from = new HashMap<>();
        Map<TopicPartition, OffsetAndMetadata> offsetsNow = committed.of(partitions);
        partitions.forEach(partition -> from.put(partition,
                offsetsNow.containsKey(partition) ? offsetsNow.get(partition).offset() : 0L));
        ledger.restore(ledgerReader, from);
    }

    private void forget(Collection<TopicPartition> partitions) {
        scheduler.dropPartitions(partitions);
        outbox.forget(partitions);
        ledger.forget(partitions);
        offsets.forget(partitions);
    }
}
