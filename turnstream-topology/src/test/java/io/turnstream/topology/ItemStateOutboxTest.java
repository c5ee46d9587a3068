package io.turnstream.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.Json;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UpsertEnvelope;
import io.turnstream.runtime.TraceContext;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.MockProcessorContext.CapturedForward;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.test.TestRecord;
import org.junit.jupiter.api.Test;

/**
 * {@code llm.item-state} gets the latest record of each key once per commit, sent just before it: what a commit
 * superseded is never sent, last write wins per key (values and tombstones alike), nothing pending outlives its
 * task's processor, and on Kafka Streams' own path (TopologyTestDriver) each record keeps its upsert's bytes,
 * timestamp and trace headers.
 */
class ItemStateOutboxTest {

    private static final String ITEM_KEY = "turn-1/msg-1";

    private final MockedTask task = new MockedTask(0, new BehindTasks());

    @Test
    void severalEmitsOfOneItemWithinACommitSendOneItemStateRecordWithTheLatestValue() throws IOException {
        task.process(Events.responseStart("turn-1", "sim"));
        task.process(Events.itemStart("msg-1", "message"));
        task.process(Events.delta("msg-1", "Hello"));
        task.process(Events.delta("msg-1", ", world"));
        task.process(Events.done("msg-1"));

        List<Record<String, byte[]>> itemUpserts = task.forwardedTo(UpsertTopology.UPSERTS_SINK).stream()
                .filter(r -> payload(r) instanceof UIUpsert u && u.itemId().equals("msg-1")).toList();
        assertThat(itemUpserts).as("the item emitted more than once in this commit").hasSizeGreaterThan(1);
        assertThat(task.forwardedTo(UpsertTopology.ITEM_STATE_SINK)).as("before the commit").isEmpty();

        task.commit();

        List<Record<String, byte[]>> itemState = task.forwardedTo(UpsertTopology.ITEM_STATE_SINK);
        assertThat(itemState).extracting(Record::key).as("one record per key")
                .containsExactly("turn-1/turn", ITEM_KEY);
        Record<String, byte[]> latest = itemUpserts.get(itemUpserts.size() - 1);
        Record<String, byte[]> state = itemState.get(1);
        assertThat(state.value()).isEqualTo(latest.value());
        assertThat(((UIUpsert) payload(state)).content()).isEqualTo("Hello, world");
        assertThat(state.timestamp()).isEqualTo(latest.timestamp());
        assertThat(state.headers()).isEqualTo(latest.headers());

        task.context.resetForwards();
        task.process(Events.responseDone(ResponseStatus.COMPLETE));
        task.commit();
        assertThat(task.forwardedTo(UpsertTopology.ITEM_STATE_SINK)).extracting(Record::key)
                .as("the next commit sends only what changed since the last").contains("turn-1/turn").doesNotContain(ITEM_KEY);
    }

    @Test
    void aWithdrawnItemsTombstoneAfterItsPendingValueWins() {
        task.process(Events.responseStart("turn-1", "sim"));
        task.process(Events.itemStart("msg-1", "message"));
        task.process(Events.delta("msg-1", "Hello"));
        task.process(Events.withdrawn("msg-1"));

        task.commit();

        List<Record<String, byte[]>> forItem = task.forwardedTo(UpsertTopology.ITEM_STATE_SINK).stream()
                .filter(r -> r.key().equals(ITEM_KEY)).toList();
        assertThat(forItem).hasSize(1);
        assertThat(forItem.get(0).value()).as("a tombstone").isNull();
    }

    @Test
    void nothingPendingOutlivesAClosedProcessor() {
        task.process(Events.responseStart("turn-1", "sim"));
        task.process(Events.itemStart("msg-1", "message"));

        task.processor.close();
        task.commit();

        assertThat(task.forwardedTo(UpsertTopology.ITEM_STATE_SINK)).isEmpty();
    }

    @Test
    void lastWriteWinsPerKeyAndRecordsGoInTheOrderOfTheirKeysLastWrites() {
        MockProcessorContext<String, byte[]> context = new MockProcessorContext<>();
        ItemStateOutbox outbox = new ItemStateOutbox(context, true);

        outbox.send(record("a", "a1"));
        outbox.send(record("b", "b1"));
        outbox.send(record("a", null));
        outbox.send(record("c", "c1"));
        outbox.send(record("b", "b2"));
        assertThat(context.forwarded()).isEmpty();

        outbox.flush();

        assertThat(context.forwarded()).extracting(f -> f.record().key() + "=" + text(f.record().value()))
                .containsExactly("a=null", "c=c1", "b=b2");
        assertThat(context.forwarded()).extracting(f -> f.childName().orElseThrow()).containsOnly(UpsertTopology.ITEM_STATE_SINK);

        context.resetForwards();
        outbox.send(record("a", "a2"));
        outbox.flush();
        outbox.flush();
        assertThat(context.forwarded()).as("each commit sends only what changed since the last")
                .extracting(f -> (String) f.record().key()).containsExactly("a");
    }

    @Test
    void withoutACommitHookEveryRecordGoesAtOnce() {
        MockProcessorContext<String, byte[]> context = new MockProcessorContext<>();
        ItemStateOutbox outbox = new ItemStateOutbox(context, false);

        outbox.send(record("a", "a1"));
        outbox.send(record("a", "a2"));

        assertThat(context.forwarded()).extracting(CapturedForward::record).extracting(r -> text(r.value()))
                .containsExactly("a1", "a2");
    }

    /** Kafka Streams' own path: the records sent at the commit keep their upsert's bytes, timestamp and trace. */
    @Test
    void onKafkaStreamsEachItemStateRecordIsItsLatestUpsertsWithItsTimestampAndTraceHeaders() {
        TraceContext trace = TraceContext.fresh();
        RecordHeaders headers = new RecordHeaders();
        trace.addTo(headers);
        try (TopologyHarness topology = new TopologyHarness()) {
            topology.send("run-1", Events.responseStart("turn-1", "sim"), headers);
            topology.send("run-1", Events.itemStart("msg-1", "message"));
            topology.send("run-1", Events.delta("msg-1", "Hello"));
            topology.send("run-1", Events.done("msg-1"));

            List<TestRecord<String, byte[]>> upserts = topology.upsertRecords().stream()
                    .filter(r -> payload(r.value()) instanceof UIUpsert u && u.itemId().equals("msg-1")).toList();
            List<TestRecord<String, byte[]>> states = topology.itemStateRecords().stream()
                    .filter(r -> r.key().equals(ITEM_KEY)).toList();
            assertThat(states).isNotEmpty();
            TestRecord<String, byte[]> latest = upserts.get(upserts.size() - 1);
            TestRecord<String, byte[]> state = states.get(states.size() - 1);
            assertThat(state.value()).isEqualTo(latest.value());
            assertThat(state.timestamp()).isEqualTo(latest.timestamp());
            assertThat(state.headers().lastHeader(TraceContext.TRACEPARENT).value())
                    .isEqualTo(latest.headers().lastHeader(TraceContext.TRACEPARENT).value())
                    .isEqualTo(trace.traceparent().getBytes(StandardCharsets.UTF_8));
        }
    }

    private static Record<String, byte[]> record(String key, String value) {
        return new Record<>(key, value == null ? null : value.getBytes(StandardCharsets.UTF_8), 1L);
    }

    private static String text(byte[] value) {
        return value == null ? "null" : new String(value, StandardCharsets.UTF_8);
    }

    private static Object payload(Record<String, byte[]> record) {
        return payload(record.value());
    }

    private static Object payload(byte[] value) {
        try {
            return Json.fromBytes(value, UpsertEnvelope.class).payload();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}
