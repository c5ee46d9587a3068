package io.turnstream.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.UIStatus;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiItemType;
import io.turnstream.model.UiPayloadType;
import io.turnstream.model.UpsertEnvelope;
import java.util.List;

/** What a UI reads of one turn on {@code llm.upserts}, picked out by kind, for the agent-loop tests. */
final class TurnUpserts {

    private TurnUpserts() {
    }

    static List<UIStatus> toolStatuses(List<UpsertEnvelope> turn) {
        return statuses(turn, UiPayloadType.TOOL_STATUS);
    }

    static List<UIStatus> turnStatuses(List<UpsertEnvelope> turn) {
        return statuses(turn, UiPayloadType.TURN_STATUS);
    }

    static List<UIUpsert> toolOutputs(List<UpsertEnvelope> turn) {
        return turn.stream().map(UpsertEnvelope::payload)
                .filter(p -> p instanceof UIUpsert u && u.itemType() == UiItemType.TOOL_OUTPUT)
                .map(p -> (UIUpsert) p).toList();
    }

    /** The turn's one tool output. */
    static UIUpsert toolOutput(List<UpsertEnvelope> turn) {
        List<UIUpsert> outputs = toolOutputs(turn);
        assertThat(outputs).as("tool outputs of %s", turn).hasSize(1);
        return outputs.get(0);
    }

    /** The event that closed the turn: its last upsert. */
    static UITurnEvent end(List<UpsertEnvelope> turn) {
        return (UITurnEvent) turn.get(turn.size() - 1).payload();
    }

    /** Where this very payload stands in the turn, or -1. */
    static int indexOf(List<UpsertEnvelope> turn, Object payload) {
        for (int i = 0; i < turn.size(); i++) {
            if (turn.get(i).payload() == payload) {
                return i;
            }
        }
        return -1;
    }

    private static List<UIStatus> statuses(List<UpsertEnvelope> turn, UiPayloadType type) {
        return turn.stream().map(UpsertEnvelope::payload)
                .filter(p -> p instanceof UIStatus s && s.type() == type)
                .map(p -> (UIStatus) p).toList();
    }
}
