package io.turnstream.gateway.loop;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Rounds of calls no one asked about never push out an approval a person may still decide. */
class ApprovalDecisionsTest {

    @Test
    void aFloodOfUnknownCallIdsKeepsAPendingApproval() {
        ApprovalDecisions approvals = new ApprovalDecisions();
        approvals.asked("turn-of-tenant-a", "call-1");

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
        ApprovalDecisions approvals = new ApprovalDecisions();
        ApprovalDecisions.Round first = approvals.round("turn-1", "call-0");

        for (int i = 1; i <= ApprovalDecisions.KEPT; i++) {
            approvals.round("turn-1", "call-" + i);
        }

        assertThat(approvals.round("turn-1", "call-0")).as("evicted, so a fresh round").isNotSameAs(first);
    }
}
