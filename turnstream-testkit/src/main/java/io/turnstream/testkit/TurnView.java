package io.turnstream.testkit;

import io.turnstream.model.ItemAppend;
import io.turnstream.model.UIStatus;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiPayloadType;
import io.turnstream.model.UpsertEnvelope;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One turn as a client sees it from {@code llm.upserts} and {@code llm.item-appends}: the latest
 * upsert of each item (highest {@code version}, in order of first appearance), the lifecycle events,
 * the statuses, and each item's text rebuilt from its appends by the client rule of docs/topology.md ("Live text").
 */
public final class TurnView {

    private final String turnId;
    private final List<UpsertEnvelope> envelopes;
    private final Map<String, UIUpsert> items = new LinkedHashMap<>();
    private final List<UITurnEvent> lifecycle = new ArrayList<>();
    private final List<UIStatus> statuses = new ArrayList<>();
    private final Map<String, StringBuilder> liveText = new LinkedHashMap<>();

    TurnView(String turnId, List<UpsertEnvelope> upserts, List<ItemAppend> appends) {
        this.turnId = turnId;
        this.envelopes = upserts.stream().filter(e -> e.turnId().equals(turnId)).toList();
        for (UpsertEnvelope envelope : envelopes) {
            if (envelope.payload() instanceof UIUpsert upsert) {
                items.merge(upsert.itemId(), upsert, (held, next) -> next.version() > held.version() ? next : held);
            } else if (envelope.payload() instanceof UITurnEvent event) {
                lifecycle.add(event);
            } else if (envelope.payload() instanceof UIStatus status) {
                statuses.add(status);
            }
        }
        appends.stream().filter(a -> a.turnId().equals(turnId)).forEach(this::apply);
    }

    /** The client rule: apply an append at the current length, skip what is covered, stop at a gap. */
    private void apply(ItemAppend append) {
        StringBuilder text = liveText.computeIfAbsent(append.itemId(), id -> new StringBuilder());
        long length = text.codePointCount(0, text.length());
        if (append.offset() > length) {
            return;
        }
        int covered = (int) (length - append.offset());
        int total = append.text().codePointCount(0, append.text().length());
        if (covered < total) {
            text.append(append.text().substring(append.text().offsetByCodePoints(0, covered)));
        }
    }

    public String turnId() {
        return turnId;
    }

    /** Every envelope of the turn on {@code llm.upserts}, in order. */
    public List<UpsertEnvelope> envelopes() {
        return envelopes;
    }

    /** The latest upsert of each item, in order of first appearance. */
    public List<UIUpsert> items() {
        return List.copyOf(items.values());
    }

    public Optional<UIUpsert> item(String itemId) {
        return Optional.ofNullable(items.get(itemId));
    }

    /** {@code turn_started}, then {@code turn_completed} or {@code turn_error}. */
    public List<UITurnEvent> lifecycle() {
        return List.copyOf(lifecycle);
    }

    /** The closing event, when the turn closed. */
    public Optional<UITurnEvent> end() {
        return lifecycle.stream().filter(e -> e.type() != UiPayloadType.TURN_STARTED).reduce((first, last) -> last);
    }

    public List<UIStatus> statuses() {
        return List.copyOf(statuses);
    }

    /** The item's text as a live client built it from appends alone (empty when it had none). */
    public String liveText(String itemId) {
        StringBuilder text = liveText.get(itemId);
        return text == null ? "" : text.toString();
    }

    @Override
    public String toString() {
        StringBuilder out = new StringBuilder("turn ").append(turnId);
        lifecycle.forEach(e -> out.append("\n  ").append(e.type()).append(e.status() == null ? "" : " " + e.status())
                .append(e.error() == null ? "" : " " + e.error().code() + ": " + e.error().message()));
        items.values().forEach(u -> out.append("\n  ").append(u.itemType()).append(' ').append(u.itemId()).append(' ')
                .append(u.changeType()).append(" v").append(u.version())
                .append(u.toolName() == null ? "" : " " + u.toolName() + " " + u.toolArguments())
                .append(u.content() == null ? "" : " \"" + u.content() + "\""));
        return out.toString();
    }
}
