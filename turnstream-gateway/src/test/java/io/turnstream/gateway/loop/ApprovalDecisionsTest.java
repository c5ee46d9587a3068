package io.turnstream.gateway.loop;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Approval rounds as {@code llm.control} tells them, without a broker: the first decision after
 * an ask stands, and rounds of calls no one asked about never push out an approval a person may
 * still decide.
 */
class ApprovalDecisionsTest {

    private final ApprovalDecisions approvals = new ApprovalDecisions();

    @Test
    void theFirstDecisionAfterTheAskStandsAndLaterOnesChangeNothing() {
        approvals.asked("turn-1", "call-1", "write_file");

        approvals.decided("turn-1", "call-1", false, "no");
        approvals.decided("turn-1", "call-1", true, "yes after all");

        ApprovalDecisions.Round round = approvals.round("turn-1", "call-1");
        assertThat(round.asked).isDone();
        assertThat(round.decision).isCompletedWithValue(new ApprovalDecisions.Decision(false, "no"));
    }

    @Test
    void aDecisionBeforeAnyAskIsNotTheOneThatStands() {
        approvals.decided("turn-1", "call-1", true, null);
        approvals.asked("turn-1", "call-1", "write_file");

        assertThat(approvals.round("turn-1", "call-1").decision).isNotDone();

        approvals.decided("turn-1", "call-1", false, "denied");
        assertThat(approvals.round("turn-1", "call-1").decision)
                .isCompletedWithValue(new ApprovalDecisions.Decision(false, "denied"));
    }

    @Test
    void aNewAskAfterADecisionOpensANewRound() {
        approvals.asked("turn-1", "call-1", "write_file");
        approvals.decided("turn-1", "call-1", true, null);
        ApprovalDecisions.Round first = approvals.round("turn-1", "call-1");

        // the call was read again by another executor, which asks again
        approvals.asked("turn-1", "call-1", "write_file");
        ApprovalDecisions.Round second = approvals.round("turn-1", "call-1");

        assertThat(second).isNotSameAs(first);
        assertThat(second.asked).isDone();
        assertThat(second.decision).isNotDone();
    }

    @Test
    void anAskKnownOnlyFromTheCompactedStateCountsAsAskedWithoutEndingARoundThatIsDecided() {
        approvals.askedBefore("turn-1", "call-1", "write_file");
        assertThat(approvals.round("turn-1", "call-1").asked).isDone();

        approvals.decided("turn-1", "call-1", true, null);
        approvals.askedBefore("turn-1", "call-1", "write_file");
        assertThat(approvals.round("turn-1", "call-1").decision).isDone();
    }

    @Test
    void roundsOfDifferentCallsAndTurnsAreApart() {
        approvals.asked("turn-1", "call-1", "write_file");
        approvals.decided("turn-1", "call-1", true, null);

        assertThat(approvals.round("turn-2", "call-1").asked).isNotDone();
        assertThat(approvals.round("turn-1", "call-2").asked).isNotDone();
    }

    @Test
    void aFloodOfUnknownCallIdsKeepsAPendingApproval() {
        approvals.asked("turn-of-tenant-a", "call-1", "write_file");

        for (int i = 0; i < ApprovalDecisions.KEPT * 2; i++) {
            approvals.round("turn-of-tenant-b", "unknown-call-" + i);
        }
        approvals.decided("turn-of-tenant-a", "call-1", true, "looks fine");

        assertThat(approvals.round("turn-of-tenant-a", "call-1").decision)
                .as("the ask survived the flood, so the decision reached it")
                .isCompletedWithValue(new ApprovalDecisions.Decision(true, "looks fine"));
    }

    @Test
    void roundsThatAreNotPendingStillGoPastTheBound() {
        ApprovalDecisions.Round first = approvals.round("turn-1", "call-0");

        for (int i = 1; i <= ApprovalDecisions.KEPT; i++) {
            approvals.round("turn-1", "call-" + i);
        }

        assertThat(approvals.round("turn-1", "call-0")).as("evicted, so a fresh round").isNotSameAs(first);
    }
}
