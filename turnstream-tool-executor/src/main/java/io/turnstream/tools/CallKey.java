package io.turnstream.tools;

import io.turnstream.model.ToolCall;

/**
 * What identifies a tool call to the executor: its turn and its call id together. Call ids come from the
 * model (or a simulated provider that numbers them per turn), so two turns, of one tenant or two, may
 * use the same one; approvals and the ledger never mix them up.
 */
record CallKey(String turnId, String callId) {

    static CallKey of(ToolCall call) {
        return new CallKey(call.turnId(), call.callId());
    }

    /**
     * The ledger record's key: compaction keeps one entry per call of a turn. Turn ids never hold a
     * {@code /} (the gateway makes them; the intake dead-letters any other), so the key is unambiguous.
     */
    String ledgerKey() {
        return turnId + "/" + callId;
    }
}
