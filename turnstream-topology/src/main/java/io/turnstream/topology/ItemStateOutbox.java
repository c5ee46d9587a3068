package io.turnstream.topology;

import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.internals.InternalProcessorContext;
import org.apache.kafka.streams.processor.internals.ProcessorNode;
import org.apache.kafka.streams.processor.internals.ProcessorRecordContext;

/**
 * The task's records for the compacted {@code llm.item-state}, sent once per key and commit: the latest of each key,
 * just before the commit, instead of one record per emit. Every emit sends the item's envelope to {@code llm.upserts}
 * and to {@code llm.item-state}, each with the item's whole content; on {@code llm.item-state} only the latest value of
 * a key is ever worth keeping (the contract: the latest upsert per item; compaction keeps no other), so the records a
 * later one of the same key supersedes within a commit are not sent at all (profiled: the second send of each emit,
 * its record, compression and batch, cost about as much as the first).
 *
 * <p>Why no reader sees {@code llm.item-state} behind {@code llm.upserts}: the topology runs exactly-once, and what is
 * sent here goes out in {@link BeforeCommitStore}'s hook ({@code StreamTask.prepareCommit} flushes the stores before
 * the producer's flush and the transaction's commit, Kafka Streams 4.3.1), so in the same transaction as the upserts
 * it follows; a {@code read_committed} reader sees that transaction's records all at once or none of them, as before.
 * Which records a transaction holds changes (fewer intermediate ones), what it makes visible does not.
 *
 * <p>Last write wins per key: a value, a {@code withdrawn} item's tombstone and a retention tombstone all go through
 * the one pending map, and the records go out in the order of each key's last write (the stream of records without
 * the superseded ones). Each keeps its own timestamp, headers (the turn's trace) and the record context it was sent
 * from (the input record, or the punctuation), which Kafka Streams' sink and its error handler read. Memory: one entry
 * per key changed since the last commit.
 *
 * <p>Forwarding outside {@code process} and {@code punctuate} needs what Kafka Streams sets around those calls, as its
 * own caching stores do when they flush ({@code TimestampedCacheFlushListener}): the processor's node, captured in
 * {@code init} (Streams sets it while the processor initialises), and a record context, both set on the internal
 * context for the forward and restored after it. A clean close commits before it closes the processor; a dirty close
 * aborts the transaction, and {@link #drop} forgets what is pending when the processor closes. Without the hook (a
 * store not wrapped) every record is forwarded at once.
 */
final class ItemStateOutbox {

    private final ProcessorContext<String, byte[]> context;
    /** The internal context the records are forwarded through at the commit; null outside Kafka Streams (mocks). */
    private final InternalProcessorContext<?, ?> internal;
    private final ProcessorNode<?, ?, ?, ?> node;
    private final boolean deferring;
    /** By key, in the order of each key's last write (access order: a put of a pending key moves it to the end). */
    private final Map<String, Pending> pending = new LinkedHashMap<>(256, 0.75f, true);

    private record Pending(Record<String, byte[]> record, ProcessorRecordContext from) {
    }

    /**
     * Created in the processor's {@code init}; with {@code deferring}, {@link #flush} must run before each commit
     * (the processor's {@link BeforeCommitStore} hook).
     */
    ItemStateOutbox(ProcessorContext<String, byte[]> context, boolean deferring) {
        this.context = context;
        this.internal = context instanceof InternalProcessorContext<?, ?> streams ? streams : null;
        this.node = internal == null ? null : internal.currentNode();
        this.deferring = deferring;
    }

    /** A record for {@code llm.item-state} (a null value is a tombstone): pending until the commit, replacing its key's. */
    void send(Record<String, byte[]> record) {
        if (!deferring) {
            context.forward(record, UpsertTopology.ITEM_STATE_SINK);
            return;
        }
        pending.put(record.key(), new Pending(record, internal == null ? null : internal.recordContext()));
    }

    /** Forwards the latest record of every pending key; runs just before each commit. */
    void flush() {
        if (pending.isEmpty()) {
            return;
        }
        ProcessorNode<?, ?, ?, ?> previousNode = internal == null ? null : internal.currentNode();
        ProcessorRecordContext previousRecord = internal == null ? null : internal.recordContext();
        try {
            for (Pending p : pending.values()) {
                if (internal != null) {
                    internal.setCurrentNode(node);
                    internal.setRecordContext(p.from());
                }
                context.forward(p.record(), UpsertTopology.ITEM_STATE_SINK);
            }
        } finally {
            pending.clear();
            if (internal != null) {
                internal.setRecordContext(previousRecord);
                internal.setCurrentNode(previousNode);
            }
        }
    }

    /** Forgets what is pending: the task closes (a clean close has committed it already). */
    void drop() {
        pending.clear();
    }

    /** Keys waiting for the commit. */
    int pendingKeys() {
        return pending.size();
    }
}
