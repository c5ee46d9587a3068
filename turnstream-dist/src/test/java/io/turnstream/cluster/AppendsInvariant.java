package io.turnstream.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.ChangeType;
import io.turnstream.model.ItemAppend;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UpsertEnvelope;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.LongStream;

/**
 * What {@code llm.item-appends} must hold against {@code llm.upserts} and the gateways' raw events, per
 * turn and item: each turn's append {@code seq} contiguous from 1, each item's appends at contiguous
 * offsets, and the text they rebuild
 * <ul>
 *   <li>equal to the content of the item's last upsert (its {@code completed} one);</li>
 *   <li>for an item withdrawn after it completed (a step made again after its gateway died), equal to
 *       that completed content, the {@code withdrawn} upsert being empty;</li>
 *   <li>for an item withdrawn while open, the start of the text the gateway streamed into it, as is its
 *       last streaming upsert's content, but either may be ahead of the other: appends are sent at the
 *       next tick, upserts at once when a delta reaches the batch gradient (or after the batch
 *       timeout), and the withdrawal ends the item where each of them was. A topology that processes
 *       the withdrawal right after the item's last deltas (a gateway that takes the turn over again at
 *       once, or a backlog read in one batch) sends no more of either; a client removes the item.</li>
 * </ul>
 */
final class AppendsInvariant {

    private AppendsInvariant() {
    }

    /**
     * @param runs the run id of each turn (raw events are keyed by it)
     * @param raw the raw events read, by run id
     * @return how many items with appends were checked
     */
    static int assertAppendsRebuildEveryItem(List<String> turns, Map<String, String> runs, List<UpsertEnvelope> upserts,
                                             List<ItemAppend> appends, Map<String, List<StreamEvent>> raw) {
        Map<String, List<UIUpsert>> upsertsByItem = upserts.stream().filter(e -> e.payload() instanceof UIUpsert)
                .map(e -> (UIUpsert) e.payload())
                .collect(Collectors.groupingBy(u -> u.turnId() + "/" + u.itemId()));
        Map<String, List<ItemAppend>> byTurn = appends.stream().collect(Collectors.groupingBy(ItemAppend::turnId));
        int items = 0;
        for (String turn : turns) {
            List<ItemAppend> turnAppends = byTurn.getOrDefault(turn, List.of());
            assertThat(turnAppends.stream().map(ItemAppend::seq).toList())
                    .as("append seq of turn %s: contiguous from 1", turn)
                    .containsExactlyElementsOf(LongStream.rangeClosed(1, turnAppends.size()).boxed().toList());
            Map<String, String> streamed = streamedText(raw.getOrDefault(runs.get(turn), List.of()));
            Map<String, List<ItemAppend>> byItem = turnAppends.stream().collect(Collectors.groupingBy(ItemAppend::itemId));
            for (Map.Entry<String, List<ItemAppend>> item : byItem.entrySet()) {
                String rebuilt = rebuilt(item.getKey(), item.getValue());
                List<UIUpsert> versions = upsertsByItem.getOrDefault(turn + "/" + item.getKey(), List.of()).stream()
                        .sorted(Comparator.comparingLong(UIUpsert::version)).toList();
                assertThat(versions).as("upserts of item %s of turn %s", item.getKey(), turn).isNotEmpty();
                UIUpsert last = versions.get(versions.size() - 1);
                List<UIUpsert> shown = versions.stream().filter(u -> u.changeType() != ChangeType.WITHDRAWN).toList();
                UIUpsert lastShown = shown.isEmpty() ? null : shown.get(shown.size() - 1);
                String what = "appends of item " + item.getKey() + " of turn " + turn;
                if (last.changeType() != ChangeType.WITHDRAWN || lastShown != null && lastShown.changeType() == ChangeType.COMPLETED) {
                    assertThat(lastShown).as("an upsert of item %s with content", item.getKey()).isNotNull();
                    assertThat(rebuilt).as(what).isEqualTo(lastShown.content());
                } else {
                    String sent = streamed.getOrDefault(item.getKey(), "");
                    assertThat(sent).as(what + ", withdrawn while open: the start of what the gateway streamed")
                            .startsWith(rebuilt);
                    if (lastShown != null) {
                        assertThat(sent).as("last streaming upsert of item %s of turn %s, withdrawn while open: the start "
                                + "of what the gateway streamed", item.getKey(), turn).startsWith(lastShown.content());
                    }
                }
                items++;
            }
        }
        return items;
    }

    private static String rebuilt(String itemId, List<ItemAppend> appends) {
        StringBuilder text = new StringBuilder();
        for (ItemAppend append : appends.stream().sorted(Comparator.comparingLong(ItemAppend::seq)).toList()) {
            assertThat(append.offset()).as("offset of append %d of %s", append.seq(), itemId)
                    .isEqualTo(text.codePointCount(0, text.length()));
            text.append(append.text());
        }
        return text.toString();
    }

    /** The text the gateway streamed into each item of a run: its initial content, then its deltas. */
    private static Map<String, String> streamedText(List<StreamEvent> events) {
        Map<String, StringBuilder> text = new HashMap<>();
        for (StreamEvent event : events) {
            if (event.payload() instanceof StreamPayload.ItemStart start && start.initialContent() != null) {
                text.computeIfAbsent(start.itemId(), id -> new StringBuilder()).append(start.initialContent());
            } else if (event.payload() instanceof StreamPayload.ItemDelta delta && delta.deltaContent() != null) {
                text.computeIfAbsent(delta.itemId(), id -> new StringBuilder()).append(delta.deltaContent());
            }
        }
        return text.entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().toString()));
    }
}
