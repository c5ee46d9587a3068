package io.turnstream.topology;

import static io.turnstream.topology.Events.delta;
import static io.turnstream.topology.Events.done;
import static io.turnstream.topology.Events.doneWithContent;
import static io.turnstream.topology.Events.itemStart;
import static io.turnstream.topology.Events.responseDone;
import static io.turnstream.topology.Events.responseStart;
import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.ChangeType;
import io.turnstream.model.ItemAppend;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiPayloadType;
import io.turnstream.model.UpsertEnvelope;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Random texts split into random deltas across random items and interleaved turns, with wall-clock
 * time passing at random. Whatever the interleaving, the invariants of the contract hold.
 */
class RandomizedTurnsTest {

    private static final String ALPHABET = "abc def ghi, jkl. 你好 😀 éü\n";

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
    void invariantsHoldForRandomTurns(long seed) {
        Random random = new Random(seed);
        try (TopologyHarness topology = new TopologyHarness()) {
            Map<String, String> expectedContent = new HashMap<>();
            List<String> userItems = new ArrayList<>();
            playRandomTurns(topology, random, expectedContent, userItems);

            List<UpsertEnvelope> envelopes = topology.upserts();
            assertSeqContiguousPerTurn(envelopes);
            assertNothingAfterTheTurnClosed(envelopes);
            Map<String, List<UIUpsert>> byItem = new HashMap<>();
            envelopes.stream().filter(e -> e.payload() instanceof UIUpsert)
                    .forEach(e -> byItem.computeIfAbsent(e.turnId() + "/" + ((UIUpsert) e.payload()).itemId(),
                            k -> new ArrayList<>()).add((UIUpsert) e.payload()));
            assertThat(byItem.keySet()).containsExactlyInAnyOrderElementsOf(expectedContent.keySet());
            byItem.forEach((key, upserts) -> {
                assertThat(upserts.get(upserts.size() - 1).content()).as("final content of %s", key)
                        .isEqualTo(expectedContent.get(key));
                assertThat(upserts.get(upserts.size() - 1).changeType()).isEqualTo(ChangeType.COMPLETED);
                for (int i = 0; i < upserts.size(); i++) {
                    assertThat(upserts.get(i).version()).as("version of %s", key).isEqualTo(i + 1);
                }
            });
            userItems.forEach(key -> assertThat(byItem.get(key)).as("held user message %s", key).hasSize(1));
            assertThat(topology.deadLetters()).isEmpty();
        }
    }

    /**
     * A client following the rule of docs/topology.md ("Live text") on both topics, reading them in a
     * random interleaving (each topic in its own order), ends with every streamed item's final content
     * and never shows text that is not a prefix of it. The appends alone are contiguous and rebuild each item's text.
     */
    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
    void appendsWithUpsertsRebuildTheFinalContent(long seed) {
        Random random = new Random(seed);
        try (TopologyHarness topology = new TopologyHarness()) {
            Map<String, String> expectedContent = new HashMap<>();
            List<String> userItems = new ArrayList<>();
            playRandomTurns(topology, random, expectedContent, userItems);
            List<UpsertEnvelope> upserts = topology.upserts();
            List<ItemAppend> appends = topology.appends();

            assertAppendSeqContiguousPerTurn(appends);
            Map<String, StringBuilder> appended = new HashMap<>();
            for (ItemAppend append : appends) {
                StringBuilder text = appended.computeIfAbsent(append.turnId() + "/" + append.itemId(), k -> new StringBuilder());
                assertThat(append.offset()).as("offset of %s", append).isEqualTo(text.codePointCount(0, text.length()));
                text.append(append.text());
            }
            userItems.forEach(key -> assertThat(appended).as("appends of held %s", key).doesNotContainKey(key));
            appended.forEach((key, text) -> assertThat(text.toString()).as("appends of %s", key)
                    .isEqualTo(expectedContent.get(key)));

            LiveTextClient client = new LiveTextClient();
            int u = 0;
            int a = 0;
            while (u < upserts.size() || a < appends.size()) {
                if (a == appends.size() || (u < upserts.size() && random.nextBoolean())) {
                    client.accept(upserts.get(u++));
                } else {
                    client.accept(appends.get(a++));
                }
                client.shown().forEach((key, text) -> assertThat(expectedContent.get(key)).as("shown of %s", key)
                        .startsWith(text));
            }
            assertThat(client.shown()).isEqualTo(expectedContent);
        }
    }

    private static void playRandomTurns(TopologyHarness topology, Random random, Map<String, String> expectedContent,
                                        List<String> userItems) {
        int turns = 1 + random.nextInt(4);
        List<List<Runnable>> steps = new ArrayList<>();
        for (int t = 0; t < turns; t++) {
            steps.add(scriptTurn(topology, random, "run-" + t, "turn-" + t, expectedContent, userItems));
        }
        // Interleave the turns' steps at random, each turn's own steps staying in order.
        while (steps.stream().anyMatch(s -> !s.isEmpty())) {
            List<Runnable> turnSteps = steps.get(random.nextInt(steps.size()));
            if (!turnSteps.isEmpty()) {
                turnSteps.remove(0).run();
                if (random.nextInt(10) == 0) {
                    topology.advanceWallClock(Duration.ofMillis(random.nextInt(1_500)));
                }
            }
        }
    }

    /** The steps of one turn: start, items with random deltas (some overlapping), done, end. */
    private static List<Runnable> scriptTurn(TopologyHarness topology, Random random, String runId, String turnId,
                                             Map<String, String> expectedContent, List<String> userItems) {
        List<Runnable> steps = new ArrayList<>();
        steps.add(() -> topology.send(runId, responseStart(turnId, "anthropic")));
        String userItem = runId + "-user-prompt";
        String prompt = randomText(random, 1 + random.nextInt(60));
        steps.add(() -> topology.send(runId, itemStart(userItem, "message")));
        steps.add(() -> topology.send(runId, doneWithContent(userItem, "message", prompt, "user")));
        expectedContent.put(turnId + "/" + userItem, prompt);
        userItems.add(turnId + "/" + userItem);

        int items = 1 + random.nextInt(3);
        List<List<Runnable>> itemSteps = new ArrayList<>();
        for (int i = 0; i < items; i++) {
            String itemId = "item-" + i;
            String type = random.nextBoolean() ? "message" : "reasoning";
            String text = randomText(random, random.nextInt(3_000));
            expectedContent.put(turnId + "/" + itemId, text);
            List<Runnable> mine = new ArrayList<>();
            mine.add(() -> topology.send(runId, itemStart(itemId, type)));
            for (String piece : randomSplit(random, text)) {
                mine.add(() -> topology.send(runId, delta(itemId, piece)));
            }
            mine.add(() -> topology.send(runId, done(itemId)));
            itemSteps.add(mine);
        }
        while (itemSteps.stream().anyMatch(s -> !s.isEmpty())) {
            List<Runnable> next = itemSteps.get(random.nextInt(itemSteps.size()));
            if (!next.isEmpty()) {
                steps.add(next.remove(0));
            }
        }
        steps.add(() -> topology.send(runId, responseDone(ResponseStatus.COMPLETE)));
        return steps;
    }

    private static String randomText(Random random, int codePoints) {
        StringBuilder text = new StringBuilder();
        int[] alphabet = ALPHABET.codePoints().toArray();
        for (int i = 0; i < codePoints; i++) {
            text.appendCodePoint(alphabet[random.nextInt(alphabet.length)]);
        }
        return text.toString();
    }

    /** Splits on code-point boundaries into pieces of 1 to 40 code points. */
    private static List<String> randomSplit(Random random, String text) {
        List<String> pieces = new ArrayList<>();
        int[] codePoints = text.codePoints().toArray();
        int i = 0;
        while (i < codePoints.length) {
            int length = Math.min(codePoints.length - i, 1 + random.nextInt(40));
            pieces.add(new String(codePoints, i, length));
            i += length;
        }
        return pieces;
    }

    private static void assertSeqContiguousPerTurn(List<UpsertEnvelope> envelopes) {
        Map<String, Long> lastSeq = new HashMap<>();
        for (UpsertEnvelope envelope : envelopes) {
            long expected = lastSeq.getOrDefault(envelope.turnId(), 0L) + 1;
            assertThat(envelope.seq()).as("seq of %s", envelope.turnId()).isEqualTo(expected);
            lastSeq.put(envelope.turnId(), envelope.seq());
        }
    }

    private static void assertAppendSeqContiguousPerTurn(List<ItemAppend> appends) {
        Map<String, Long> lastSeq = new HashMap<>();
        for (ItemAppend append : appends) {
            assertThat(append.seq()).as("append seq of %s", append.turnId())
                    .isEqualTo(lastSeq.getOrDefault(append.turnId(), 0L) + 1);
            lastSeq.put(append.turnId(), append.seq());
        }
    }

    private static void assertNothingAfterTheTurnClosed(List<UpsertEnvelope> envelopes) {
        Map<String, Boolean> closed = new HashMap<>();
        for (UpsertEnvelope envelope : envelopes) {
            assertThat(closed.getOrDefault(envelope.turnId(), false)).as("record after close in %s", envelope.turnId())
                    .isFalse();
            if (envelope.payload() instanceof UITurnEvent event && event.type() != UiPayloadType.TURN_STARTED) {
                closed.put(envelope.turnId(), true);
            }
        }
    }
}
