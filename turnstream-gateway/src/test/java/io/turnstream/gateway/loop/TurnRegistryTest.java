package io.turnstream.gateway.loop;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.model.ToolResult;
import org.junit.jupiter.api.Test;

/** The turns a gateway runs, routed by turn id, however they end: without a broker. */
class TurnRegistryTest {

    private final TurnRegistry registry = new TurnRegistry();

    @Test
    void resultsAsksAndStartsReachTheRunningTurnWhetherItWaitsForThemYetOrNot() {
        TurnRegistry.ActiveTurn turn = registry.register(status("turn-1"));
        ToolResult result = new ToolResult("call-1", "turn-1", "read_file", true, TextNode.valueOf("ok"), null, 1L, 2L);

        assertThat(registry.deliver("turn-1", result)).isTrue();
        assertThat(registry.approvalRequested("turn-1", "call-2")).isTrue();
        assertThat(registry.toolStarted("turn-1", "call-3", 42)).isTrue();

        assertThat(turn.result("call-1")).isCompletedWithValue(result);
        assertThat(turn.awaitingApproval("call-2")).isDone();
        assertThat(turn.started("call-3")).isCompletedWithValue(42L);
        assertThat(registry.deliver("turn-unknown", result)).as("no such turn here").isFalse();
        assertThat(registry.approvalRequested("turn-1", null)).isFalse();
    }

    @Test
    void aFinishedTurnKeepsItsFinalStatusAndTakesNothingMore() {
        registry.register(status("turn-1"));

        registry.finish("turn-1", TurnPhase.COMPLETE);

        assertThat(registry.runningCount()).isZero();
        assertThat(registry.status("turn-1")).map(TurnStatus::status).contains(TurnPhase.COMPLETE);
        assertThat(registry.cancel("turn-1", "too late")).isFalse();
        assertThat(registry.deliver("turn-1", new ToolResult("c", "turn-1", "t", true, TextNode.valueOf(""), null, 1L, 1L))).isFalse();
    }

    @Test
    void aTurnHandedOverIsForgottenWithoutAStatusSoTheNextOwnerAnswersForIt() {
        registry.register(status("turn-1"));

        registry.release("turn-1");

        assertThat(registry.running()).isEmpty();
        assertThat(registry.status("turn-1")).isEmpty();
    }

    @Test
    void aCancelThatArrivesBeforeItsTurnStartsHereCancelsItWhenItStarts() {
        assertThat(registry.cancel("turn-1", "stop")).isFalse();

        TurnRegistry.ActiveTurn turn = registry.register(status("turn-1"));

        assertThat(turn.cancel.isCancelled()).isTrue();
        assertThat(turn.cancel.reason()).isEqualTo("stop");
    }

    @Test
    void aCancelForATurnThatFinishedHereIsNotKeptForAnotherRun() {
        registry.register(status("turn-1"));
        registry.finish("turn-1", TurnPhase.ABORTED);
        registry.cancel("turn-1", "late");

        TurnRegistry.ActiveTurn again = registry.register(status("turn-1"));

        assertThat(again.cancel.isCancelled()).isFalse();
    }

    @Test
    void aRunningTurnIsCancelledAtOnce() {
        TurnRegistry.ActiveTurn turn = registry.register(status("turn-1"));

        assertThat(registry.cancel("turn-1", "by the user")).isTrue();

        assertThat(turn.cancel.isCancelled()).isTrue();
        assertThat(registry.status("turn-1")).map(TurnStatus::status).contains(TurnPhase.RUNNING);
    }

    private static TurnStatus status(String turnId) {
        return new TurnStatus(turnId, "thread-1", "run-" + turnId, TurnPhase.RUNNING);
    }
}
