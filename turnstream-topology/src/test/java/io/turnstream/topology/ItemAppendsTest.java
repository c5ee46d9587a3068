package io.turnstream.topology;

import static io.turnstream.topology.Events.cancelled;
import static io.turnstream.topology.Events.delta;
import static io.turnstream.topology.Events.done;
import static io.turnstream.topology.Events.doneWithContent;
import static io.turnstream.topology.Events.functionCallDone;
import static io.turnstream.topology.Events.functionCallStart;
import static io.turnstream.topology.Events.itemStart;
import static io.turnstream.topology.Events.itemStartWith;
import static io.turnstream.topology.Events.rawDelta;
import static io.turnstream.topology.Events.responseDone;
import static io.turnstream.topology.Events.responseStart;
import static io.turnstream.topology.Events.withdrawn;
import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.ItemAppend;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code llm.item-appends}: the new text of each streaming item, at most once per punctuation tick
 * and at the item's end, with offsets in code points and a per-turn {@code seq}.
 */
class ItemAppendsTest {

    private static final String RUN = "run-1";
    private static final Duration TICK = Duration.ofMillis(TopologyConfig.DEFAULT_PUNCTUATE_INTERVAL_MS);

    private final TopologyHarness topology = new TopologyHarness();

    @AfterEach
    void close() {
        topology.close();
    }

    @Test
    void eachTickSendsTheTextAddedSinceTheLastAndItemDoneSendsTheRest() {
        topology.send(RUN, responseStart("turn-1", "anthropic"));
        topology.send(RUN, itemStart("msg", "message"));
        topology.send(RUN, delta("msg", "Hel"));
        topology.send(RUN, delta("msg", "lo"));
        assertThat(topology.appends()).as("nothing before the tick").isEmpty();

        tick();
        topology.send(RUN, delta("msg", ", wor"));
        topology.send(RUN, delta("msg", "ld"));
        tick();
        topology.send(RUN, delta("msg", "!"));
        topology.send(RUN, done("msg"));
        topology.send(RUN, responseDone(ResponseStatus.COMPLETE));

        assertThat(described(topology.appends())).containsExactly(
                "turn-1 #1 msg @0 \"Hello\"",
                "turn-1 #2 msg @5 \", world\"",
                "turn-1 #3 msg @12 \"!\"");
    }

    @Test
    void manyDeltasBetweenTwoTicksMakeOneAppend() {
        topology.send(RUN, responseStart("turn-1", "anthropic"));
        topology.send(RUN, itemStart("msg", "message"));
        StringBuilder sent = new StringBuilder();
        for (int i = 0; i < 500; i++) {
            String piece = "w" + i + " ";
            sent.append(piece);
            topology.send(RUN, delta("msg", piece));
        }
        tick();
        tick();

        List<ItemAppend> appends = topology.appends();
        assertThat(appends).hasSize(1);
        assertThat(appends.get(0).text()).isEqualTo(sent.toString());
        assertThat(appends.get(0).offset()).isZero();
    }

    @Test
    void appendTimestampIsTheWallClockOfTheTickThatSentIt() {
        topology.send(RUN, responseStart("turn-1", "anthropic"));
        topology.send(RUN, itemStart("msg", "message"));
        topology.send(RUN, delta("msg", "a"));
        tick();

        assertThat(topology.appends()).extracting(ItemAppend::timestamp).containsExactly(1_000_000 + TICK.toMillis());
    }

    @Test
    void offsetsCountCodePointsAndAnEmojiSplitAcrossDeltasIsSentWhole() {
        topology.send(RUN, responseStart("turn-1", "anthropic"));
        topology.send(RUN, itemStart("msg", "message"));
        topology.send(RUN, delta("msg", "你😀"));
        tick();
        // The tick falls between the two halves of a rocket: the high half waits for the low one.
        topology.sendRaw(RUN, rawDelta(RUN, "msg", "go \\ud83d"));
        tick();
        topology.sendRaw(RUN, rawDelta(RUN, "msg", "\\ude80!"));
        tick();
        topology.sendRaw(RUN, rawDelta(RUN, "msg", "\\ud83d"));
        tick();
        assertThat(topology.appends()).as("a lone high half sends nothing yet").extracting(ItemAppend::text)
                .containsExactly("你😀", "go ", "🚀!");
        topology.sendRaw(RUN, rawDelta(RUN, "msg", "\\ude00"));
        topology.send(RUN, done("msg"));

        assertThat(described(topology.appends())).containsExactly("turn-1 #4 msg @7 \"😀\"");
    }

    @Test
    void aTickWithoutNewTextSendsNothing() {
        topology.send(RUN, responseStart("turn-1", "anthropic"));
        topology.send(RUN, itemStart("msg", "message"));
        topology.send(RUN, delta("msg", "one"));
        tick();
        tick();
        tick();
        topology.send(RUN, done("msg"));

        assertThat(described(topology.appends())).containsExactly("turn-1 #1 msg @0 \"one\"");
    }

    @Test
    void itemDoneWithoutATickSendsTheWholeTextOnce() {
        topology.send(RUN, responseStart("turn-1", "anthropic"));
        topology.send(RUN, itemStart("rs", "reasoning"));
        topology.send(RUN, delta("rs", "thinking "));
        topology.send(RUN, delta("rs", "hard"));
        topology.send(RUN, done("rs"));
        tick();

        assertThat(described(topology.appends())).containsExactly("turn-1 #1 rs @0 \"thinking hard\"");
    }

    @Test
    void theFinalItemsContentDecidesTheLastAppend() {
        topology.send(RUN, responseStart("turn-1", "anthropic"));
        topology.send(RUN, itemStart("msg", "message"));
        topology.send(RUN, delta("msg", "Hello"));
        tick();
        topology.send(RUN, delta("msg", " wor"));
        topology.send(RUN, doneWithContent("msg", "message", "Hello world.", "agent"));

        assertThat(described(topology.appends())).containsExactly(
                "turn-1 #1 msg @0 \"Hello\"",
                "turn-1 #2 msg @5 \" world.\"");
    }

    @Test
    void initialContentIsAppendedAtTheNextTick() {
        topology.send(RUN, responseStart("turn-1", "anthropic"));
        topology.send(RUN, itemStartWith("msg", "message", "Hi"));
        tick();

        assertThat(described(topology.appends())).containsExactly("turn-1 #1 msg @0 \"Hi\"");
    }

    @Test
    void heldUserMessagesHaveNoAppendsAndAToolCallsArgumentsStreamAsAppendsEndingAtItsCompletedArguments() {
        topology.send(RUN, responseStart("turn-1", "anthropic"));
        topology.send(RUN, itemStart(RUN + "-user-prompt", "message"));
        topology.send(RUN, new StreamPayload.ItemStart("sys", "message", "Be brief", null, null, null, "user"));
        topology.send(RUN, functionCallStart("fc", "grep", "call-1"));
        topology.send(RUN, delta(RUN + "-user-prompt", "What is "));
        topology.send(RUN, delta("fc", "{\"pattern\":"));
        tick();
        topology.send(RUN, delta(RUN + "-user-prompt", "here?"));
        topology.send(RUN, delta("fc", "\"x\"}"));
        tick();
        topology.send(RUN, done(RUN + "-user-prompt"));
        topology.send(RUN, functionCallDone("fc", "grep", "{\"pattern\":\"x\"}", "call-1"));
        topology.send(RUN, itemStart("msg", "message"));
        topology.send(RUN, delta("msg", "Answer"));
        topology.send(RUN, responseDone(ResponseStatus.COMPLETE));

        assertThat(described(topology.appends())).as("the call's arguments per tick, then the agent's message")
                .containsExactly("turn-1 #1 fc @0 \"{\"pattern\":\"", "turn-1 #2 fc @11 \"\"x\"}\"",
                        "turn-1 #3 msg @0 \"Answer\"");
    }

    @Test
    void aToolCallWhoseArgumentsDidNotStreamSendsThemWholeWithItsCompletedUpsert() {
        topology.send(RUN, responseStart("turn-1", "anthropic"));
        topology.send(RUN, functionCallStart("fc", "list_files", "call-1"));
        topology.send(RUN, functionCallDone("fc", "list_files", "{\"path\":\".\"}", "call-1"));
        topology.send(RUN, responseDone(ResponseStatus.COMPLETE));

        assertThat(described(topology.appends())).containsExactly("turn-1 #1 fc @0 \"{\"path\":\".\"}\"");
    }

    @Test
    void seqCountsEveryAppendOfTheTurnAcrossItemsAndEachTurnHasItsOwn() {
        topology.send(RUN, responseStart("turn-1", "anthropic"));
        topology.send("run-2", responseStart("turn-2", "openai"));
        topology.send(RUN, itemStart("rs", "reasoning"));
        topology.send(RUN, itemStart("msg", "message"));
        topology.send("run-2", itemStart("msg", "message"));
        topology.send(RUN, delta("rs", "plan"));
        topology.send("run-2", delta("msg", "other"));
        tick();
        topology.send(RUN, delta("rs", " more"));
        topology.send(RUN, delta("msg", "Sure"));
        tick();
        topology.send(RUN, delta("msg", "!"));
        topology.send(RUN, done("rs"));
        topology.send(RUN, responseDone(ResponseStatus.COMPLETE));
        topology.send("run-2", responseDone(ResponseStatus.COMPLETE));

        assertThat(described(topology.appends())).containsExactly(
                "turn-1 #1 rs @0 \"plan\"",
                "turn-2 #1 msg @0 \"other\"",
                "turn-1 #2 msg @0 \"Sure\"",
                "turn-1 #3 rs @4 \" more\"",
                "turn-1 #4 msg @4 \"!\"");
    }

    @Test
    void theTurnsCloseFlushesWhatOpenItemsHaveNotSent() {
        topology.send(RUN, responseStart("turn-1", "anthropic"));
        topology.send(RUN, itemStart("msg", "message"));
        topology.send(RUN, delta("msg", "cut "));
        tick();
        topology.send(RUN, delta("msg", "off"));
        topology.send(RUN, responseDone(ResponseStatus.ABORTED));
        tick();

        assertThat(described(topology.appends())).containsExactly(
                "turn-1 #1 msg @0 \"cut \"",
                "turn-1 #2 msg @4 \"off\"");
    }

    @Test
    void aCancelledItemSendsNothingMore() {
        topology.send(RUN, responseStart("turn-1", "anthropic"));
        topology.send(RUN, itemStart("msg", "message"));
        topology.send(RUN, delta("msg", "abc"));
        tick();
        topology.send(RUN, delta("msg", "def"));
        topology.send(RUN, cancelled("msg"));
        tick();
        topology.send(RUN, responseDone(ResponseStatus.ABORTED));

        assertThat(described(topology.appends())).containsExactly("turn-1 #1 msg @0 \"abc\"");
    }

    /**
     * What ClusterFaultsTest found (docs/benchmarks.md, "Cluster faults"): a gateway that takes a turn over
     * withdraws the open item of the step it calls again at once, before the item's batch timeout. The
     * appends, sent every tick, are then ahead of the item's last (batched) upsert, and the withdrawal
     * ends the item there: no append follows, no upsert ever holds the appended text, and a client
     * removes the item on its {@code withdrawn} upsert.
     */
    @Test
    void anItemWithdrawnWhileOpenEndsWithItsAppendsAheadOfItsLastStreamingUpsert() {
        topology.send(RUN, responseStart("turn-1", "anthropic"));
        topology.send(RUN, itemStart("run-1-s3-1", "message"));
        topology.send(RUN, delta("run-1-s3-1", "`README.md` "));
        tick();
        topology.send(RUN, delta("run-1-s3-1", "has "));
        tick();
        topology.send(RUN, withdrawn("run-1-s3-1"));
        topology.send(RUN, delta("run-1-s3-1", "two"));
        topology.advanceWallClock(Duration.ofMillis(topology.config.batchTimeoutMs()).multipliedBy(2));

        assertThat(topology.emitted()).containsExactly(
                "turn_started",
                "message created v1 origin=agent \"`README.md` \"",
                "message withdrawn v2");
        assertThat(described(topology.appends())).containsExactly(
                "turn-1 #1 run-1-s3-1 @0 \"`README.md` \"",
                "turn-1 #2 run-1-s3-1 @12 \"has \"");
    }

    /**
     * The other order, also found by ClusterFaultsTest: a delta that reaches the batch gradient is emitted
     * at once while its append waits for the next tick, and the withdrawal comes first (a backlog the
     * topology reads in one batch): the appends end behind the item's last upsert.
     */
    @Test
    void anItemWithdrawnWhileOpenEndsWithItsAppendsBehindAnUpsertEmittedBeforeTheTick() {
        String more = "begins with: " + "a heading and two lines about the launch. ".repeat(3);
        topology.send(RUN, responseStart("turn-1", "anthropic"));
        topology.send(RUN, itemStart("run-1-s3-1", "message"));
        topology.send(RUN, delta("run-1-s3-1", "`README.md` has 3 lines. It "));
        tick();
        topology.send(RUN, delta("run-1-s3-1", more));
        topology.send(RUN, withdrawn("run-1-s3-1"));
        tick();

        assertThat(topology.emitted()).containsExactly(
                "turn_started",
                "message created v1 origin=agent \"`README.md` has 3 lines. It \"",
                "message updated v2 origin=agent \"`README.md` has 3 lines. It " + more + "\"",
                "message withdrawn v3");
        assertThat(described(topology.appends())).containsExactly(
                "turn-1 #1 run-1-s3-1 @0 \"`README.md` has 3 lines. It \"");
    }

    @Test
    void upsertsAreUnchangedByTheAppends() {
        topology.send(RUN, responseStart("turn-1", "anthropic"));
        topology.send(RUN, itemStart("msg", "message"));
        topology.send(RUN, delta("msg", "Hello, how are you?"));
        tick();
        topology.send(RUN, delta("msg", " I hope you're having a great"));
        tick();
        topology.send(RUN, delta("msg", " day today!"));
        topology.send(RUN, done("msg"));
        topology.send(RUN, responseDone(ResponseStatus.COMPLETE));

        assertThat(topology.emitted()).containsExactly(
                "turn_started",
                "message created v1 origin=agent \"Hello, how are you?\"",
                "message updated v2 origin=agent \"Hello, how are you? I hope you're having a great\"",
                "message completed v3 origin=agent \"Hello, how are you? I hope you're having a great day today!\"",
                "turn_completed complete");
        assertThat(topology.appends()).hasSize(3);
    }

    private void tick() {
        topology.advanceWallClock(TICK);
    }

    /** {@code turn #seq item @offset "text"}. */
    private static List<String> described(List<ItemAppend> appends) {
        return appends.stream()
                .map(a -> a.turnId() + " #" + a.seq() + " " + a.itemId() + " @" + a.offset() + " \"" + a.text() + "\"")
                .toList();
    }
}
