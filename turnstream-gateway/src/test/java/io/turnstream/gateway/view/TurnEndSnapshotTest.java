package io.turnstream.gateway.view;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.turnstream.model.ChangeType;
import io.turnstream.model.UIUpsert;
import io.turnstream.testsupport.UsesBroker;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The snapshot a caller waiting for a turn's end gets ({@link TurnViews#ended}: the non-streaming OpenAI-compatible
 * answers, a continued thread's history), on a real embedded broker with records the test writes, and a replay buffer
 * of 5 events, so a turn's first items leave it and only the item-state view, read apart from the live feed, holds them.
 */
@UsesBroker
class TurnEndSnapshotTest {

    private static final int REPLAY_BUFFER = 5;

    private static LiveTopicsGateway live;

    @BeforeAll
    static void startGateway() throws Exception {
        live = LiveTopicsGateway.start(Map.of(TurnViewConfig.PREFIX + "replay-buffer", String.valueOf(REPLAY_BUFFER)));
    }

    @AfterAll
    static void stopGateway() {
        live.close();
    }

    @Test
    void anEndReadWhileTheItemStateViewLacksAnItemThatLeftTheReplayBufferWaitsForIt() throws Exception {
        TurnRecords turn = live.newTurn("thread-1");
        CompletableFuture<TurnSnapshot> ended = live.gateway().views().ended(turn.id);
        turn.started();
        Runnable firstState = turn.messageHoldingItsState("first", "The first answer.", ChangeType.COMPLETED);
        for (int i = 0; i < REPLAY_BUFFER; i++) {
            turn.message("second", "The second " + i, i == 0 ? ChangeType.CREATED : ChangeType.UPDATED);
        }
        turn.message("second", "The second answer.", ChangeType.COMPLETED);
        turn.completed();
        // seqs: 1 turn_started, 2 first, 3-8 second, 9 turn_completed; the buffer holds 5-9
        live.awaitLiveFeedRead(turn);
        await().until(() -> live.gateway().views().stateHeld(turn.id).equals(List.of(8L, 9L)));

        assertThat(ended).as("the item-state view does not hold the first item yet, nor the buffer").isNotDone();

        firstState.run();
        TurnSnapshot snapshot = ended.get(30, TimeUnit.SECONDS);
        assertThat(snapshot.items()).extracting(UIUpsert::itemId).containsExactly("first", "second");
        assertThat(snapshot.items()).extracting(UIUpsert::content).containsExactly("The first answer.", "The second answer.");
    }

    @Test
    void aCallerThatComesAfterTheEndWaitsAsWell() throws Exception {
        TurnRecords turn = live.newTurn("thread-1");
        turn.started();
        Runnable firstState = turn.messageHoldingItsState("first", "The first answer.", ChangeType.COMPLETED);
        for (int i = 0; i < REPLAY_BUFFER; i++) {
            turn.message("second", "The second " + i, i == 0 ? ChangeType.CREATED : ChangeType.UPDATED);
        }
        turn.completed();
        live.awaitLiveFeedRead(turn);
        await().until(() -> live.gateway().views().stateHeld(turn.id).equals(List.of(7L, 8L)));

        CompletableFuture<TurnSnapshot> ended = live.gateway().views().ended(turn.id);
        assertThat(ended).isNotDone();

        firstState.run();
        assertThat(ended.get(30, TimeUnit.SECONDS).items()).extracting(UIUpsert::itemId).containsExactly("first", "second");
    }

    @Test
    void aTurnTheReplayBufferHoldsWholeIsAnsweredAtItsEnd() throws Exception {
        TurnRecords turn = live.newTurn("thread-1");
        CompletableFuture<TurnSnapshot> ended = live.gateway().views().ended(turn.id);
        turn.started();
        turn.messageHoldingItsState("only", "All of it.", ChangeType.COMPLETED);
        turn.completed();

        assertThat(ended.get(30, TimeUnit.SECONDS).items()).extracting(UIUpsert::content).containsExactly("All of it.");
    }
}
