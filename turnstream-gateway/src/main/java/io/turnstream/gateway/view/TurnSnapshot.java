package io.turnstream.gateway.view;

import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiPayloadType;
import io.turnstream.model.UpsertEnvelope;
import java.util.ArrayList;
import java.util.List;

/**
 * A turn as {@code GET /v1/turns/{turnId}} shows it: its status, the latest lifecycle event, and the
 * current state of every item in stream order.
 *
 * @param runId null when another gateway runs the turn
 * @param seq the highest upsert seq the snapshot includes (0 before the first upsert)
 * @param turn the latest {@code turn_started}/{@code turn_completed}/{@code turn_error}, or null
 */
public record TurnSnapshot(String turnId, String threadId, String runId, TurnPhase status, long seq, UITurnEvent turn,
                           List<UIUpsert> items) {

    /**
     * @param runningHere the status of this gateway's own turn, or null
     * @param state the latest envelope per item and lifecycle, in seq order
     */
    static TurnSnapshot of(String turnId, TurnStatus runningHere, List<UpsertEnvelope> state) {
        UITurnEvent turn = null;
        List<UIUpsert> items = new ArrayList<>();
        long seq = 0;
        String threadId = null;
        for (UpsertEnvelope envelope : state) {
            seq = Math.max(seq, envelope.seq());
            if (envelope.payload() instanceof UIUpsert item) {
                items.add(item);
                threadId = item.threadId();
            } else if (envelope.payload() instanceof UITurnEvent event) {
                turn = event;
                threadId = event.threadId();
            }
        }
        if (runningHere != null) {
            return new TurnSnapshot(turnId, runningHere.threadId(), runningHere.runId(), runningHere.status(), seq,
                    turn, items);
        }
        return new TurnSnapshot(turnId, threadId, null, statusOf(turn), seq, turn, items);
    }

    private static TurnPhase statusOf(UITurnEvent turn) {
        if (turn == null || turn.type() == UiPayloadType.TURN_STARTED) {
            return TurnPhase.RUNNING;
        }
        if (turn.type() == UiPayloadType.TURN_ERROR) {
            return TurnPhase.ERROR;
        }
        return turn.status() != null ? TurnPhase.endedAs(turn.status()) : TurnPhase.COMPLETE;
    }
}
