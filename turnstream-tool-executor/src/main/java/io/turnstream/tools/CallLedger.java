package io.turnstream.tools;

import io.turnstream.model.Json;
import io.turnstream.model.ToolCall;
import io.turnstream.runtime.GrouplessConsumer;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the executor knows about each call (by turn and call id, {@link CallKey}), so a redelivered call is
 * never run twice and a call id another turn reuses never looks answered. Durable marks live in a compacted
 * ledger topic keyed by {@code <turnId>/<callId>}, written in the same transaction as the result
 * (or, for a non-idempotent call, committed before it runs), in the partition with the number of the
 * tool-calls partition the call came from: an instance restores exactly the partitions it is assigned.
 * Calls read since the last restore are remembered as well, so a duplicate record arriving while the
 * first is still running or not yet committed is ignored too.
 */
final class CallLedger {

    private static final Logger LOG = LoggerFactory.getLogger(CallLedger.class);
    private static final Duration RESTORE_TIMEOUT = Duration.ofMinutes(5);

    enum Mark { STARTED, COMPLETED }

    /** A ledger record's value; {@code offset} is the call's offset in tool-calls, so old marks can be forgotten. */
    record Entry(String callId, String turnId, String toolName, String state, long offset, long at) {
    }

    private record Durable(Mark mark, long offset) {
    }

    private static final class PartitionLedger {
        final Map<CallKey, Durable> durable = new HashMap<>();
        final Set<CallKey> seen = new HashSet<>();
    }

    private final String topic;
    private final Clock clock;
    private final Map<TopicPartition, PartitionLedger> partitions = new HashMap<>();

    CallLedger(String topic, Clock clock) {
        this.topic = topic;
        this.clock = clock;
    }

    /**
     * Reads the ledger partitions of newly assigned tool-calls partitions to their end, keeping marks of
     * calls at or after the committed offset (earlier calls are never redelivered).
     */
    void restore(GrouplessConsumer reader, Map<TopicPartition, Long> committed) {
        Map<TopicPartition, Long> ledgerFromTheBeginning = new HashMap<>();
        Map<Integer, TopicPartition> sourceByNumber = new HashMap<>();
        for (TopicPartition source : committed.keySet()) {
            ledgerFromTheBeginning.put(new TopicPartition(topic, source.partition()), 0L);
            sourceByNumber.put(source.partition(), source);
            partitions.put(source, new PartitionLedger());
        }
        reader.readToEnd(ledgerFromTheBeginning, RESTORE_TIMEOUT, record -> {
            TopicPartition source = sourceByNumber.get(record.partition());
            Entry entry = parse(record);
            if (entry.offset() >= committed.get(source)) {
                partitions.get(source).durable.put(new CallKey(entry.turnId(), entry.callId()), new Durable(Mark.valueOf(entry.state()), entry.offset()));
            }
        });
        LOG.info("restored the marks of {} calls for {}", committed.keySet().stream()
                .mapToInt(source -> partitions.get(source).durable.size()).sum(), committed.keySet());
    }

    /** The durable mark of a call, or null when none was committed. */
    Mark markOf(RecordPosition position, CallKey call) {
        Durable durable = ledger(position).durable.get(call);
        return durable == null ? null : durable.mark();
    }

    /** True when this call of this turn was read before since the last restore: the record is a duplicate. */
    boolean seenBefore(RecordPosition position, CallKey call) {
        return !ledger(position).seen.add(call);
    }

    ProducerRecord<String, byte[]> record(ToolCall call, RecordPosition position, Mark mark) {
        Entry entry = new Entry(call.callId(), call.turnId(), call.toolName(), mark.name(), position.offset(),
                clock.millis());
        return new ProducerRecord<>(topic, position.partition().partition(), CallKey.of(call).ledgerKey(), Json.toBytes(entry));
    }

    /** A mark was committed. */
    void committed(ToolCall call, RecordPosition position, Mark mark) {
        PartitionLedger ledger = partitions.get(position.partition());
        if (ledger != null) {
            ledger.durable.put(CallKey.of(call), new Durable(mark, position.offset()));
            if (mark == Mark.COMPLETED) {
                ledger.seen.remove(CallKey.of(call));
            }
        }
    }

    /** Marks of calls before the committed offsets are no longer needed: those records are not read again. */
    void prune(Map<TopicPartition, Long> committed) {
        committed.forEach((partition, offset) -> {
            PartitionLedger ledger = partitions.get(partition);
            if (ledger != null) {
                ledger.durable.values().removeIf(durable -> durable.offset() < offset);
            }
        });
    }

    /** After a rewind every record is read again from the committed offsets. */
    void forgetSeen() {
        partitions.values().forEach(ledger -> ledger.seen.clear());
    }

    void forget(Collection<TopicPartition> revoked) {
        revoked.forEach(partitions::remove);
    }

    private PartitionLedger ledger(RecordPosition position) {
        return partitions.computeIfAbsent(position.partition(), p -> new PartitionLedger());
    }

    /** An unreadable entry throws: the reader skips it with a warning. */
    private static Entry parse(ConsumerRecord<String, byte[]> record) throws IOException {
        Entry entry = Json.fromBytes(record.value(), Entry.class);
        if (entry.callId() == null || entry.turnId() == null || entry.state() == null) {
            throw new IOException("a ledger entry needs a call id, a turn id and a state");
        }
        Mark.valueOf(entry.state());
        return entry;
    }
}
