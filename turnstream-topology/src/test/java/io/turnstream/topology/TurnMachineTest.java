package io.turnstream.topology;

import static io.turnstream.topology.Events.cancelled;
import static io.turnstream.topology.Events.delta;
import static io.turnstream.topology.Events.done;
import static io.turnstream.topology.Events.functionCallDone;
import static io.turnstream.topology.Events.functionCallStart;
import static io.turnstream.topology.Events.itemStart;
import static io.turnstream.topology.Events.responseDone;
import static io.turnstream.topology.Events.responseError;
import static io.turnstream.topology.Events.responseStart;
import static io.turnstream.topology.Events.withdrawn;
import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.ErrorInfo;
import io.turnstream.model.ItemAppend;
import io.turnstream.model.Json;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.TurnActivity;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UiPayloadType;
import io.turnstream.model.UpsertEnvelope;
import io.turnstream.topology.TurnMachine.Rejection;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.Test;

/**
 * The turn logic on its own: no processor, no TopologyTestDriver. Events go in with an offset, time
 * is a field the test moves, ticks are called, and what the machine sends is collected by sink.
 */
class TurnMachineTest {

    private static final String RUN = "run-1";

    private final TopologyConfig config = TopologyConfig.defaults();
    private final List<Sent> sent = new ArrayList<>();
    private long nowMs = 1_000_000;
    private long offset;
    private final TurnMachine machine = new TurnMachine(config,
            new StateCache<>(store("turns", Serdes.String(), StateSerde.of(TurnState.class)), 100),
            new StateCache<>(store("items", Serdes.String(), StateSerde.of(ItemState.class)), 100),
            new ItemBuffer(store("item-chunks", Serdes.Bytes(), Serdes.ByteArray())),
            new DeadlineQueue(store("deadlines", Serdes.Bytes(), Serdes.ByteArray())),
            (sink, record) -> sent.add(new Sent(sink, record)),
            () -> nowMs);

    private record Sent(String sink, Record<String, byte[]> record) {
    }

    @Test
    void aStreamedMessageIsCreatedAtOnceAppendedOnTheTickAndCompletedWithItsWholeText() {
        feed(responseStart("turn-1", "anthropic"));
        feed(itemStart("msg", "message"));
        feed(delta("msg", "Hello"));
        feed(delta("msg", " world"));
        machine.onTick(nowMs);
        feed(done("msg"));
        feed(responseDone(ResponseStatus.COMPLETE));

        assertThat(upserts()).containsExactly(
                "turn_started",
                "message created v1 origin=agent \"Hello\"",
                "message completed v2 origin=agent \"Hello world\"",
                "turn_completed complete");
        assertThat(appends()).containsExactly("#1 @0 \"Hello world\"");
    }

    @Test
    void anItemThatGoesQuietIsEmittedWhenItsBatchTimeoutFallsDue() {
        feed(responseStart("turn-1", "anthropic"));
        feed(itemStart("msg", "message"));
        feed(delta("msg", "Hello"));
        feed(delta("msg", " again"));

        nowMs += config.batchTimeoutMs();
        machine.onTick(nowMs);

        assertThat(upserts()).containsExactly(
                "turn_started",
                "message created v1 origin=agent \"Hello\"",
                "message updated v2 origin=agent \"Hello again\"");
    }

    @Test
    void aTurnWithoutEventsForItsIdleTimeoutIsClosedWithATimeout() {
        feed(responseStart("turn-1", "anthropic"));

        nowMs += config.idleTimeoutMs();
        machine.onTick(nowMs);

        assertThat(upserts()).containsExactly("turn_started",
                "turn_error TURN_TIMEOUT: no event for " + config.idleTimeoutMs() + " ms");
    }

    @Test
    void aDeltaAfterTheBatchTimerWasArmedPushesItBackToTheLastDeltaPlusTheTimeout() {
        feed(responseStart("turn-1", "anthropic"));
        feed(itemStart("msg", "message"));
        feed(delta("msg", "Hello"));
        feed(delta("msg", " again"));
        long armedDueMs = nowMs + config.batchTimeoutMs();
        nowMs += config.batchTimeoutMs() / 2;
        feed(delta("msg", " and again"));

        nowMs = armedDueMs;
        machine.onTick(nowMs);
        assertThat(upserts()).containsExactly("turn_started", "message created v1 origin=agent \"Hello\"");

        nowMs += config.batchTimeoutMs() / 2;
        machine.onTick(nowMs);
        assertThat(upserts()).containsExactly(
                "turn_started",
                "message created v1 origin=agent \"Hello\"",
                "message updated v2 origin=agent \"Hello again and again\"");
    }

    @Test
    void anEventBeforeTheIdleDeadlinePushesItBackToTheLastEventPlusTheTimeout() {
        feed(responseStart("turn-1", "anthropic"));
        long firstDueMs = nowMs + config.idleTimeoutMs();
        nowMs += config.idleTimeoutMs() / 2;
        feed(itemStart("msg", "message"));

        nowMs = firstDueMs;
        machine.onTick(nowMs);
        assertThat(upserts()).containsExactly("turn_started");

        nowMs += config.idleTimeoutMs() / 2;
        machine.onTick(nowMs);
        assertThat(upserts()).containsExactly("turn_started", "message completed v1 origin=agent \"\"",
                "turn_error TURN_TIMEOUT: no event for " + config.idleTimeoutMs() + " ms");
    }

    @Test
    void aTurnReadBackFromTheStoreStillFlushesItsOpenItemsWhenItCloses() {
        feed(responseStart("turn-1", "anthropic"));
        feed(itemStart("msg", "message"));
        feed(delta("msg", "Hello"));
        for (int i = 0; i < 150; i++) {
            // more turns than the cache holds (100): turn-1's state is let go and read back, its open items uncounted
            feed("run-other-" + i, responseStart("turn-other-" + i, "anthropic"));
        }
        feed(delta("msg", " world"));
        feed(responseDone(ResponseStatus.COMPLETE));

        assertThat(upserts()).endsWith("message completed v2 origin=agent \"Hello world\"", "turn_completed complete");
    }

    @Test
    void anItemStillOpenWhenTheOthersFinishedIsFlushedWhenTheTurnCloses() {
        feed(responseStart("turn-1", "anthropic"));
        feed(itemStart("msg", "message"));
        feed(delta("msg", "Hello"));
        feed(itemStart("rs", "reasoning"));
        feed(cancelled("rs"));
        feed(itemStart("msg-2", "message"));
        feed(done("msg-2"));
        feed(responseDone(ResponseStatus.COMPLETE));

        assertThat(upserts()).endsWith("message completed v2 origin=agent \"Hello\"", "turn_completed complete");
    }

    @Test
    void aTurnClosedByItsIdleTimeoutReportsWhatItsCompletedStepsUsed() {
        feed(responseStart("turn-1", "anthropic"));
        feed(stepCompleted(1, new StreamPayload.Usage(100, 20, 120, null, null, null, 0.5)));
        feed(stepCompleted(2, new StreamPayload.Usage(300, 10, 310, 200L, null, null, 0.25)));

        nowMs += config.idleTimeoutMs();
        machine.onTick(nowMs);

        List<byte[]> sent = sent(UpsertTopology.UPSERTS_SINK);
        UITurnEvent timedOut = (UITurnEvent) read(sent.get(sent.size() - 1), UpsertEnvelope.class).payload();
        assertThat(timedOut.error().code()).isEqualTo("TURN_TIMEOUT");
        assertThat(timedOut.usage()).isEqualTo(new UITurnEvent.Usage(400, 30, 430, 200L, null, null, 0.75));
        assertThat(timedOut.failedAttemptsUsage()).as("failed calls are not reported by status").isNull();
    }

    @Test
    void eventsOutsideAnOpenTurnAreRejectedWithTheirReasonAndNothingIsSent() {
        assertThat(feed(delta("msg", "early")))
                .isEqualTo(new Rejection("item_delta before response_start: no open turn for run " + RUN, null));

        feed(responseStart("turn-1", "anthropic"));
        assertThat(feed(responseStart("turn-1", "anthropic"))).isEqualTo(new Rejection("duplicate response_start", "turn-1"));
        assertThat(feed(delta("ghost", "boo"))).isEqualTo(new Rejection("item_delta for unknown item ghost", "turn-1"));
        feed(responseDone(ResponseStatus.COMPLETE));
        assertThat(feed(delta("msg", "late"))).isEqualTo(new Rejection("item_delta after the turn closed", "turn-1"));

        assertThat(upserts()).containsExactly("turn_started", "turn_completed complete");
    }

    @Test
    void aWithdrawnAttemptLeavesNothingVisibleAndItsCallIsNeverPublished() {
        feed(responseStart("turn-1", "anthropic"));
        feed(itemStart("msg", "message"));
        feed(delta("msg", "Let me write it."));
        feed(done("msg"));
        feed(itemStart("rsn", "reasoning"));
        feed(delta("rsn", "thinking"));
        feed(functionCallStart("call", "write_file", "call-1"));

        feed(withdrawn("msg"));
        feed(withdrawn("rsn"));
        feed(withdrawn("call"));

        assertThat(upserts()).containsExactly(
                "turn_started",
                "message created v1 origin=agent \"Let me write it.\"",
                "message completed v2 origin=agent \"Let me write it.\"",
                "reasoning created v1 provider=anthropic \"thinking\"",
                "message withdrawn v3",
                "reasoning withdrawn v2",
                "tool_call withdrawn v1 call=call-1");
        assertThat(tombstones()).containsExactly("turn-1/msg", "turn-1/rsn", "turn-1/call", "turn-1/tool-status/call-1");
        assertThat(sent(UpsertTopology.TOOL_CALLS_SINK)).isEmpty();
        assertThat(feed(withdrawn("msg")))
                .isEqualTo(new Rejection("item_withdrawn for item msg which was already withdrawn", "turn-1"));
        assertThat(feed(functionCallDone("call", "write_file", "{}", "call-1")))
                .isEqualTo(new Rejection("item_done for item call which already finished", "turn-1"));
        assertThat(feed(withdrawn("ghost"))).isEqualTo(new Rejection("item_withdrawn for unknown item ghost", "turn-1"));
    }

    @Test
    void theRetrysItemsAreUntouchedByTheWithdrawalAndItsCallIsPublished() {
        feed(responseStart("turn-1", "anthropic"));
        feed(functionCallStart("call-a", "write_file", "call-1"));
        feed(withdrawn("call-a"));
        feed(functionCallStart("call-b", "write_file", "call-2"));
        feed(functionCallDone("call-b", "write_file", "{\"path\":\"a.txt\"}", "call-2"));
        feed(responseDone(ResponseStatus.COMPLETE));

        assertThat(upserts()).containsExactly("turn_started", "tool_call withdrawn v1 call=call-1",
                "tool_call completed v1 write_file {\"path\":\"a.txt\"} call=call-2", "turn_completed complete");
        assertThat(sent(UpsertTopology.TOOL_CALLS_SINK)).hasSize(1);
    }

    @Test
    void theUsageOfFailedModelCallsIsCarriedApartToTurnCompleted() {
        feed(responseStart("turn-1", "anthropic"));
        feed(new StreamPayload.ResponseDone("resp", ResponseStatus.COMPLETE, new StreamPayload.Usage(100, 20, 120),
                "stop", "model-x", new StreamPayload.Usage(40, 5, 45, null, null, null, 0.25)));

        UITurnEvent completed = (UITurnEvent) read(sent(UpsertTopology.UPSERTS_SINK).get(1), UpsertEnvelope.class).payload();
        assertThat(completed.usage()).isEqualTo(new UITurnEvent.Usage(100, 20, 120));
        assertThat(completed.failedAttemptsUsage()).isEqualTo(new UITurnEvent.Usage(40, 5, 45, null, null, null, 0.25));
    }

    @Test
    void aFailedTurnCarriesItsUsageAndItsFailedCallsUsageToTurnError() {
        feed(responseStart("turn-1", "anthropic"));
        feed(new StreamPayload.ResponseError("resp", ErrorInfo.of("overloaded_error", "busy"),
                new StreamPayload.Usage(100, 20, 120, 80L, null, null, 0.5),
                new StreamPayload.Usage(40, 5, 45, null, null, null, 0.25)));

        UITurnEvent failed = (UITurnEvent) read(sent(UpsertTopology.UPSERTS_SINK).get(1), UpsertEnvelope.class).payload();
        assertThat(failed.type()).isEqualTo(UiPayloadType.TURN_ERROR);
        assertThat(failed.error()).isEqualTo(ErrorInfo.of("overloaded_error", "busy"));
        assertThat(failed.usage()).isEqualTo(new UITurnEvent.Usage(100, 20, 120, 80L, null, null, 0.5));
        assertThat(failed.failedAttemptsUsage()).isEqualTo(new UITurnEvent.Usage(40, 5, 45, null, null, null, 0.25));
    }

    @Test
    void aFailedTurnWithoutUsageHasNone() {
        feed(responseStart("turn-1", "anthropic"));
        feed(responseError("TURN_CANNOT_RUN", "no such provider"));

        UITurnEvent failed = (UITurnEvent) read(sent(UpsertTopology.UPSERTS_SINK).get(1), UpsertEnvelope.class).payload();
        assertThat(failed.type()).isEqualTo(UiPayloadType.TURN_ERROR);
        assertThat(failed.usage()).isNull();
        assertThat(failed.failedAttemptsUsage()).isNull();
    }

    private static StreamPayload.TurnStatus stepCompleted(int step, StreamPayload.Usage usage) {
        return new StreamPayload.TurnStatus(TurnActivity.STEP_COMPLETED, null, null, null, null, null, null, null, step,
                "model-x", usage);
    }

    private Rejection feed(StreamPayload payload) {
        return feed(RUN, payload);
    }

    private Rejection feed(String run, StreamPayload payload) {
        long at = offset++;
        StreamEvent event = StreamEvent.of(run + ":" + at, nowMs, run, payload);
        return machine.onEvent(run, event, new RecordHeaders(), at);
    }

    private List<String> upserts() {
        return sent(UpsertTopology.UPSERTS_SINK).stream()
                .map(value -> TopologyHarness.describe(read(value, UpsertEnvelope.class).payload())).toList();
    }

    /** Keys of the null values sent to {@code llm.item-state}. */
    private List<String> tombstones() {
        return sent.stream().filter(s -> s.sink().equals(UpsertTopology.ITEM_STATE_SINK) && s.record().value() == null)
                .map(s -> s.record().key()).toList();
    }

    private List<String> appends() {
        return sent(UpsertTopology.ITEM_APPENDS_SINK).stream().map(value -> read(value, ItemAppend.class))
                .map(append -> "#" + append.seq() + " @" + append.offset() + " \"" + append.text() + "\"").toList();
    }

    private List<byte[]> sent(String sink) {
        return sent.stream().filter(s -> s.sink().equals(sink)).map(s -> s.record().value()).toList();
    }

    private static <T> T read(byte[] value, Class<T> type) {
        try {
            return Json.fromBytes(value, type);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** An in-memory store without changelog: the machine's stores, minus Kafka. */
    private static <K, V> KeyValueStore<K, V> store(String name, Serde<K> keys, Serde<V> values) {
        KeyValueStore<K, V> store = Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(name), keys, values)
                .withLoggingDisabled().build();
        store.init(new MockProcessorContext<>().getStateStoreContext(), store);
        return store;
    }
}
