package io.turnstream.gateway.loop;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Approval rounds as {@code llm.control} tells them, without a broker: the first decision after
 * an ask stands.
 */
class ApprovalDecisionsTest {

    private final ApprovalDecisions approvals = new ApprovalDecisions();

    @Test
    void theFirstDecisionAfterTheAskStandsAndLaterOnesChangeNothing() {
        approvals.asked("turn-1", "call-1");

        approvals.decided("turn-1", "call-1", false, "no");
        approvals.decided("turn-1", "call-1", true, "yes after all");

        ApprovalDecisions.Round round = approvals.round("turn-1", "call-1");
        assertThat(round.asked).isDone();
        assertThat(round.decision).isCompletedWithValue(new ApprovalDecisions.Decision(false, "no"));
    }

    @Test
    void aDecisionBeforeAnyAskIsNotTheOneThatStands() {
        approvals.decided("turn-1", "call-1", true, null);
        approvals.asked("turn-1", "call-1");

        assertThat(approvals.round("turn-1", "call-1").decision).isNotDone();

        approvals.decided("turn-1", "call-1", false, "denied");
        assertThat(approvals.round("turn-1", "call-1").decision)
                .isCompletedWithValue(new ApprovalDecisions.Decision(false, "denied"));
    }

    @Test
    void aNewAskAfterADecisionOpensANewRound() {
        approvals.asked("turn-1", "call-1");
        approvals.decided("turn-1", "call-1", true, null);
        ApprovalDecisions.Round first = approvals.round("turn-1", "call-1");

        // the call was read again by another executor, which asks again
        approvals.asked("turn-1", "call-1");
        ApprovalDecisions.Round second = approvals.round("turn-1", "call-1");

        assertThat(second).isNotSameAs(first);
        assertThat(second.asked).isDone();
        assertThat(second.decision).isNotDone();
    }

    @Test
    void anAskKnownOnlyFromTheCompactedStateCountsAsAskedWithoutEndingARoundThatIsDecided() {
        approvals.askedBefore("turn-1", "call-1");
        assertThat(approvals.round("turn-1", "call-1").asked).isDone();

        approvals.decided("turn-1", "call-1", true, null);
        approvals.askedBefore("turn-1", "call-1");
        assertThat(approvals.round("turn-1", "call-1").decision).isDone();
    }

    @Test
    void roundsOfDifferentCallsAndTurnsAreApart() {
        approvals.asked("turn-1", "call-1");
        approvals.decided("turn-1", "call-1", true, null);

        assertThat(approvals.round("turn-2", "call-1").asked).isNotDone();
        assertThat(approvals.round("turn-1", "call-2").asked).isNotDone();
    }
}
