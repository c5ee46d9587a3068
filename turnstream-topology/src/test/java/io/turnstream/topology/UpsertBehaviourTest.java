package io.turnstream.topology;

import static io.turnstream.topology.Events.cancelled;
import static io.turnstream.topology.Events.delta;
import static io.turnstream.topology.Events.done;
import static io.turnstream.topology.Events.functionCallDone;
import static io.turnstream.topology.Events.functionCallStart;
import static io.turnstream.topology.Events.itemStart;
import static io.turnstream.topology.Events.itemStartWith;
import static io.turnstream.topology.Events.responseDone;
import static io.turnstream.topology.Events.responseError;
import static io.turnstream.topology.Events.responseStart;
import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.ChangeType;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.ToolCall;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UpsertEnvelope;
import io.turnstream.runtime.Settings;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.internals.CachingKeyValueStore;
import org.apache.kafka.streams.state.internals.WrappedStateStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Behaviour beyond the seed's test cases: interleaving, flushing, timeouts, unicode, storage cost. */
class UpsertBehaviourTest {

    private TopologyHarness topology = new TopologyHarness();

    @AfterEach
    void close() {
        topology.close();
    }

    @Test
    void interleavedReasoningMessageAndToolCallEachKeepTheirOwnContentAndVersions() {
        topology.send("run-1", responseStart("turn-1", "anthropic"));
        topology.send("run-1", itemStart("rs", "reasoning"));
        topology.send("run-1", itemStart("msg", "message"));
        topology.send("run-1", functionCallStart("fc", "grep", "call-9"));
        topology.send("run-1", delta("rs", "thinking "));
        topology.send("run-1", delta("msg", "Answer: "));
        topology.send("run-1", delta("fc", "{\"pattern\":"));
        topology.send("run-1", delta("rs", "harder"));
        topology.send("run-1", delta("fc", "\"TODO\"}"));
        topology.send("run-1", delta("msg", "42"));
        topology.send("run-1", done("fc"));
        topology.send("run-1", done("rs"));
        topology.send("run-1", done("msg"));
        topology.send("run-1", responseDone(ResponseStatus.COMPLETE));

        assertThat(topology.emitted()).containsExactly(
                "turn_started",
                "reasoning created v1 provider=anthropic \"thinking \"",
                "message created v1 origin=agent \"Answer: \"",
                "tool_call completed v1 grep {\"pattern\":\"TODO\"} call=call-9",
                "reasoning completed v2 provider=anthropic \"thinking harder\"",
                "message completed v2 origin=agent \"Answer: 42\"",
                "turn_completed complete");
        assertThat(topology.toolCalls()).extracting(ToolCall::toolName).containsExactly("grep");
    }

    @Test
    void twoTurnsInterleavedOnOnePartitionDoNotMix() {
        topology.send("run-a", responseStart("turn-a", "anthropic"));
        topology.send("run-b", responseStart("turn-b", "openai"));
        topology.send("run-a", itemStart("msg", "message"));
        topology.send("run-b", itemStart("msg", "message"));
        topology.send("run-a", delta("msg", "from a"));
        topology.send("run-b", delta("msg", "from b"));
        topology.send("run-b", done("msg"));
        topology.send("run-b", responseDone(ResponseStatus.COMPLETE));
        topology.send("run-a", delta("msg", ", still a"));
        topology.send("run-a", done("msg"));
        topology.send("run-a", responseDone(ResponseStatus.COMPLETE));

        List<UpsertEnvelope> envelopes = topology.upserts();
        assertThat(envelopes.stream().filter(e -> e.turnId().equals("turn-a")).map(e -> TopologyHarness.describe(e.payload())))
                .containsExactly("turn_started", "message created v1 origin=agent \"from a\"",
                        "message completed v2 origin=agent \"from a, still a\"", "turn_completed complete");
        assertThat(envelopes.stream().filter(e -> e.turnId().equals("turn-b")).map(UpsertEnvelope::seq))
                .containsExactly(1L, 2L, 3L, 4L);
        assertThat(envelopes.stream().filter(e -> e.turnId().equals("turn-a")).map(UpsertEnvelope::seq))
                .containsExactly(1L, 2L, 3L, 4L);
    }

    @Test
    void oneLargeDeltaCrossingSeveralThresholdsEmitsOnce() {
        topology.send("run-1", responseStart("turn-1", "anthropic"));
        topology.send("run-1", itemStart("msg", "message"));
        topology.send("run-1", delta("msg", "ab"));
        topology.send("run-1", delta("msg", "x".repeat(4 * 150)));
        topology.send("run-1", delta("msg", "y".repeat(4 * 8)));
        topology.send("run-1", delta("msg", "z".repeat(4 * 10)));

        // 151 tokens pass the thresholds 10, 20, 40, 60 and 110 at once: one update, and the next
        // threshold is 160, not 20. 159 tokens stay below it; 169 cross it.
        List<UIUpsert> upserts = itemUpserts(topology.upserts());
        assertThat(upserts).extracting(UIUpsert::changeType).containsExactly(ChangeType.CREATED, ChangeType.UPDATED, ChangeType.UPDATED);
        assertThat(upserts.get(1).content()).hasSize(602);
        assertThat(upserts.get(2).content()).hasSize(602 + 32 + 40);
    }

    @Test
    void tokenEstimateCountsCodePointsSoEmojiAndCjkBatchLikeAnyText() {
        topology.send("run-1", responseStart("turn-1", "anthropic"));
        topology.send("run-1", itemStart("msg", "message"));
        String emoji = "😀".repeat(39);  // 39 code points, 78 UTF-16 chars: 10 tokens by code points, 20 by chars
        topology.send("run-1", delta("msg", "你"));
        topology.send("run-1", delta("msg", emoji));
        topology.send("run-1", delta("msg", "好"));

        List<UIUpsert> upserts = itemUpserts(topology.upserts());
        assertThat(upserts).extracting(UIUpsert::changeType).containsExactly(ChangeType.CREATED, ChangeType.UPDATED);
        assertThat(upserts.get(1).content()).isEqualTo("你" + emoji);
    }

    @Test
    void anEmojiSplitAcrossTwoDeltasIsReassembledWithoutLoss() {
        topology.send("run-1", responseStart("turn-1", "anthropic"));
        topology.send("run-1", itemStart("msg", "message"));
        // A JSON producer escapes each half of the pair on its own.
        topology.sendRaw("run-1", Events.rawDelta("run-1", "msg", "go \\ud83d"));
        topology.sendRaw("run-1", Events.rawDelta("run-1", "msg", "\\ude80!"));
        topology.send("run-1", done("msg"));

        List<UIUpsert> upserts = itemUpserts(topology.upserts());
        assertThat(upserts.get(upserts.size() - 1).content()).isEqualTo("go 🚀!");
    }

    @Test
    void invalidJsonToolArgumentsAreKeptAsTheRawString() {
        topology.send("run-1", responseStart("turn-1", "anthropic"));
        topology.send("run-1", functionCallStart("fc", "grep", "call-1"));
        topology.send("run-1", functionCallDone("fc", "grep", "{\"pattern\": \"unterminated", "call-1"));

        List<UIUpsert> upserts = itemUpserts(topology.upserts());
        assertThat(upserts.get(0).toolArguments().isTextual()).isTrue();
        assertThat(upserts.get(0).toolArguments().asText()).isEqualTo("{\"pattern\": \"unterminated");
        assertThat(topology.toolCalls().get(0).arguments().asText()).isEqualTo("{\"pattern\": \"unterminated");
    }

    @Test
    void initialContentEmitsCreatedAtOnceUnlessHeld() {
        topology.send("run-1", responseStart("turn-1", "anthropic"));
        topology.send("run-1", itemStartWith("msg", "message", "Hi"));
        topology.send("run-1", new io.turnstream.model.StreamPayload.ItemStart("sys", "message", "Be brief", null, null,
                null, "user"));
        assertThat(topology.emitted()).containsExactly("turn_started", "message created v1 origin=agent \"Hi\"");
    }

    @Test
    void responseDoneFlushesOpenItemsInStartOrderButNotAnEmptyHeldMessage() {
        topology.send("run-1", responseStart("turn-1", "anthropic"));
        topology.send("run-1", itemStart("x-user-prompt", "message"));
        topology.send("run-1", itemStart("msg", "message"));
        topology.send("run-1", itemStart("rs", "reasoning"));
        topology.send("run-1", functionCallStart("fc", "read_file", "call-1"));
        topology.send("run-1", delta("msg", "partial"));
        topology.send("run-1", delta("rs", "hmm"));
        topology.send("run-1", delta("fc", "{\"path\":\"a"));
        topology.emitted();
        topology.send("run-1", responseDone(ResponseStatus.ABORTED));

        assertThat(topology.emitted()).containsExactly(
                "message completed v2 origin=agent \"partial\"",
                "reasoning completed v2 provider=anthropic \"hmm\"",
                "tool_call completed v1 read_file \"{\\\"path\\\":\\\"a\" call=call-1",
                "turn_completed aborted");
        assertThat(topology.toolCalls()).as("a call cut off by the end of the turn is never executed").isEmpty();
    }

    @Test
    void responseErrorFlushesThenEmitsTurnError() {
        topology.send("run-1", responseStart("turn-1", "anthropic"));
        topology.send("run-1", itemStart("msg", "message"));
        topology.send("run-1", delta("msg", "so far"));
        topology.send("run-1", responseError("OVERLOADED", "try later"));

        assertThat(topology.emitted()).containsExactly(
                "turn_started",
                "message created v1 origin=agent \"so far\"",
                "message completed v2 origin=agent \"so far\"",
                "turn_error OVERLOADED: try later");
    }

    @Test
    void cancelledItemIsDroppedSilently() {
        topology.send("run-1", responseStart("turn-1", "anthropic"));
        topology.send("run-1", itemStart("msg", "message"));
        topology.send("run-1", delta("msg", "abc"));
        topology.send("run-1", cancelled("msg"));
        topology.send("run-1", responseDone(ResponseStatus.ABORTED));

        assertThat(topology.emitted()).containsExactly(
                "turn_started", "message created v1 origin=agent \"abc\"", "turn_completed aborted");
    }

    @Test
    void idleTurnIsClosedWithTurnTimeoutAndItsStateDeleted() {
        topology.close();
        topology = new TopologyHarness(configWith(TopologyConfig.IDLE_TIMEOUT_MS, "60000"));
        topology.send("run-1", responseStart("turn-1", "anthropic"));
        topology.send("run-1", itemStart("msg", "message"));
        topology.send("run-1", delta("msg", "abandoned"));
        topology.advanceWallClock(Duration.ofSeconds(50));
        topology.send("run-1", delta("msg", " mid-sentence"));
        topology.advanceWallClock(Duration.ofSeconds(50));
        assertThat(topology.emitted()).as("the second delta reset the idle watchdog").containsExactly(
                "turn_started", "message created v1 origin=agent \"abandoned\"",
                "message updated v2 origin=agent \"abandoned mid-sentence\"");

        topology.advanceWallClock(Duration.ofSeconds(11));
        assertThat(topology.emitted()).containsExactly(
                "message completed v3 origin=agent \"abandoned mid-sentence\"",
                "turn_error TURN_TIMEOUT: no event for 60000 ms");

        topology.send("run-1", delta("msg", "late"));
        assertThat(topology.emitted()).isEmpty();
        assertThat(topology.deadLetters()).extracting(TopologyHarness.DeadLetter::reason)
                .containsExactly("item_delta after the turn closed");
    }

    @Test
    void itemStateHoldsTheLatestEnvelopePerItemAndPerTurn() {
        topology.send("run-1", responseStart("turn-1", "anthropic"));
        topology.send("run-1", itemStart("msg", "message"));
        topology.send("run-1", delta("msg", "Hello, how are you?"));
        topology.send("run-1", delta("msg", " I hope you're having a great day"));
        topology.send("run-1", done("msg"));
        topology.send("run-1", responseDone(ResponseStatus.COMPLETE));

        Map<String, UpsertEnvelope> state = topology.itemState();
        assertThat(state).containsOnlyKeys("turn-1/turn", "turn-1/msg");
        assertThat(TopologyHarness.describe(state.get("turn-1/msg").payload()))
                .isEqualTo("message completed v3 origin=agent \"Hello, how are you? I hope you're having a great day\"");
        assertThat(TopologyHarness.describe(state.get("turn-1/turn").payload())).isEqualTo("turn_completed complete");
    }

    /**
     * The issue's figure: a 10,000-token message as 2,500 deltas. Each delta is written to the
     * changelog once (12-byte key, 1-byte tag + text); nothing else is written per delta.
     */
    @Test
    void changelogBytesStayASmallMultipleOfTheContent() {
        topology.send("run-1", responseStart("turn-1", "anthropic"));
        topology.send("run-1", itemStart("msg", "message"));
        StringBuilder content = new StringBuilder();
        for (int i = 0; i < 2_500; i++) {
            String delta = String.format("word%04d and more", i).substring(0, 16);
            content.append(delta);
            topology.send("run-1", delta("msg", delta));
        }
        topology.send("run-1", done("msg"));
        topology.send("run-1", responseDone(ResponseStatus.COMPLETE));

        long contentBytes = content.length();
        Map<String, Long> perStore = topology.changelogBytes();
        long changelogBytes = perStore.values().stream().mapToLong(Long::longValue).sum();
        System.out.printf("changelog bytes for a 10,000-token message in 2,500 deltas: %d (%.2fx the %d content bytes) %s%n",
                changelogBytes, (double) changelogBytes / contentBytes, contentBytes, perStore);
        assertThat(changelogBytes).isLessThan(3 * contentBytes);
        assertThat(itemUpserts(topology.upserts())).last().extracting(UIUpsert::content).isEqualTo(content.toString());
    }

    /**
     * Each store is written by a layer of its own, at most once per key and commit ({@link StateCache},
     * {@link ItemBuffer}, {@link DeadlineQueue}), so none has a record cache under it (profiled at 1,000 turns:
     * the cache's sorted-map insert and lookup by byte comparisons were 22% of the stream thread); what a
     * commit writes is in the store after it.
     */
    @Test
    void noStoreHasARecordCacheAndEachHoldsWhatTheCommitWrote() {
        topology.send("run-1", responseStart("turn-1", "anthropic"));
        topology.send("run-1", itemStart("msg", "message"));
        topology.send("run-1", delta("msg", "Still streaming"));

        for (String name : List.of(UpsertTopology.TURNS_STORE, UpsertTopology.ITEMS_STORE, UpsertTopology.CHUNKS_STORE,
                UpsertTopology.DEADLINES_STORE)) {
            KeyValueStore<?, ?> store = topology.store(name);
            for (StateStore layer = store; layer instanceof WrappedStateStore<?, ?, ?> wrapped; layer = wrapped.wrapped()) {
                assertThat(layer).as("a layer of %s", name).isNotInstanceOf(CachingKeyValueStore.class);
            }
            assertThat(entries(store)).as("entries of %s after the commit", name).isPositive();
        }
    }

    private static int entries(KeyValueStore<?, ?> store) {
        int count = 0;
        try (var it = store.all()) {
            for (; it.hasNext(); it.next()) {
                count++;
            }
        }
        return count;
    }

    @Test
    void eventIdsAreTheNameBasedUuidsOfTurnIdAndSeq() {
        topology.send("run-1", responseStart("turn-1", "anthropic"));
        topology.send("run-1", itemStart("msg", "message"));
        topology.send("run-1", delta("msg", "An answer long enough to emit while it streams."));
        topology.send("run-1", done("msg"));
        topology.send("run-1", responseDone(ResponseStatus.COMPLETE));

        assertThat(topology.upserts()).hasSizeGreaterThan(2).allSatisfy(envelope -> assertThat(envelope.eventId())
                .isEqualTo(UUID.nameUUIDFromBytes((envelope.turnId() + "#" + envelope.seq())
                        .getBytes(StandardCharsets.UTF_8)).toString()));
    }

    private static List<UIUpsert> itemUpserts(List<UpsertEnvelope> envelopes) {
        return envelopes.stream().map(UpsertEnvelope::payload).filter(UIUpsert.class::isInstance)
                .map(UIUpsert.class::cast).toList();
    }

    static TopologyConfig configWith(String key, String value) {
        Properties props = new Properties();
        props.setProperty(key, value);
        return TopologyConfig.from(Settings.of(props));
    }
}
