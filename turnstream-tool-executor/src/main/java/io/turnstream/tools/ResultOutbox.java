package io.turnstream.tools;

import io.turnstream.model.ControlMessage;
import io.turnstream.model.DeadLetterHeaders;
import io.turnstream.model.ToolCall;
import io.turnstream.model.ToolResult;
import io.turnstream.model.Topics;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.TraceContext;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeader;

/**
 * What the executor publishes in its next transaction (results, ledger marks, started notices, dead
 * letters), filled from any thread and emptied by the loop, and the records each item becomes.
 */
final class ResultOutbox {

    /** One thing to publish, for the tool-call record at {@link #position()}. */
    sealed interface Outgoing permits Answer, StartMarker, ControlNotice, DeadLetter {
        RecordPosition position();
    }

    /** A call's result, with its ledger mark "completed". */
    record Answer(ToolCall call, RecordPosition position, ToolResult result) implements Outgoing {
    }

    /** The ledger mark "started" of a non-idempotent call, committed before it runs. */
    record StartMarker(ToolScheduler.ScheduledCall call) implements Outgoing {
        @Override
        public RecordPosition position() {
            return call.position;
        }
    }

    /**
     * Tells the gateway running the turn what happens to a call, on the control topic: it runs now
     * ({@code tool_started}), waits for approval ({@code approval_requested}) or was denied for want of
     * a decision ({@code approval} with approved false).
     */
    record ControlNotice(ToolCall call, RecordPosition position, ControlMessage message) implements Outgoing {
    }

    record DeadLetter(ConsumerRecord<String, byte[]> record, RecordPosition position, String reason) implements Outgoing {
    }

    private final Topics topics;
    private final String deadLetterTopic;
    private final WireFormat wire;
    private final CallLedger ledger;
    private final Queue<Outgoing> outgoing = new ConcurrentLinkedQueue<>();
    /** A batch that could not be written for now, published before anything added since; the loop's only. */
    private final List<Outgoing> putBack = new ArrayList<>();
    /** The trace context of each call read and not yet answered, copied onto its result's headers. */
    private final Map<RecordPosition, TraceContext> traces = new ConcurrentHashMap<>();

    ResultOutbox(Topics topics, String deadLetterTopic, WireFormat wire, CallLedger ledger) {
        this.topics = topics;
        this.deadLetterTopic = deadLetterTopic;
        this.wire = wire;
        this.ledger = ledger;
    }

    void add(Outgoing item) {
        outgoing.add(item);
    }

    /** A call that will be answered: its result carries the call's trace context. */
    void rememberTrace(ConsumerRecord<String, byte[]> record, RecordPosition position) {
        TraceContext trace = TraceContext.fromHeaders(record.headers());
        if (trace != null) {
            traces.put(position, trace);
        }
    }

    /** Everything added so far, oldest first (a batch put back first of all); the outbox is empty after. */
    List<Outgoing> takeAll() {
        List<Outgoing> batch = new ArrayList<>(putBack);
        putBack.clear();
        for (Outgoing item; (item = outgoing.poll()) != null; ) {
            batch.add(item);
        }
        return batch;
    }

    /** A batch taken that could not be written for now: {@link #takeAll()} gives it again, before what came since. */
    void putBack(List<Outgoing> batch) {
        putBack.addAll(0, batch);
    }

    /**
     * The records of one item, for the caller's transaction.
     *
     * @throws io.turnstream.schema.SchemaRegistryException on Avro, when a schema to register cannot be for now
     */
    List<ProducerRecord<String, byte[]>> records(Outgoing item) {
        if (item instanceof Answer answer) {
            ProducerRecord<String, byte[]> result = new ProducerRecord<>(topics.toolResults(), answer.call().turnId(),
                    wire.write(topics.toolResults(), answer.result()));
            // kept until the transaction commits: a batch put back is written again
            TraceContext trace = traces.get(answer.position());
            if (trace != null) {
                trace.addTo(result.headers());
            }
            return List.of(result, ledger.record(answer.call(), answer.position(), CallLedger.Mark.COMPLETED));
        } else if (item instanceof StartMarker marker) {
            return List.of(ledger.record(marker.call().call, marker.position(), CallLedger.Mark.STARTED));
        } else if (item instanceof ControlNotice notice) {
            return List.of(new ProducerRecord<>(topics.control(), notice.call().turnId(),
                    wire.write(topics.control(), notice.message())));
        } else if (item instanceof DeadLetter letter) {
            ConsumerRecord<String, byte[]> source = letter.record();
            ProducerRecord<String, byte[]> record = new ProducerRecord<>(deadLetterTopic, source.key(), source.value());
            record.headers().add(new RecordHeader(DeadLetterHeaders.REASON, letter.reason().getBytes(StandardCharsets.UTF_8)));
            record.headers().add(new RecordHeader(DeadLetterHeaders.SOURCE,
                    (source.topic() + "-" + source.partition() + "@" + source.offset()).getBytes(StandardCharsets.UTF_8)));
            return List.of(record);
        }
        throw new IllegalArgumentException("not an outgoing item: " + item);
    }

    /** An answer's transaction committed: its trace context is no longer needed. */
    void published(Answer answer) {
        traces.remove(answer.position());
    }

    /** Partitions no longer ours: their pending items are the next owner's. */
    void forget(Collection<TopicPartition> partitions) {
        outgoing.removeIf(item -> partitions.contains(item.position().partition()));
        putBack.removeIf(item -> partitions.contains(item.position().partition()));
        traces.keySet().removeIf(position -> partitions.contains(position.partition()));
    }

    /** After a rewind everything is read and answered again. */
    void clear() {
        outgoing.clear();
        putBack.clear();
        traces.clear();
    }
}
