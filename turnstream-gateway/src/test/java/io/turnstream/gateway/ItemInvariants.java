package io.turnstream.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.StreamPayload;
import io.turnstream.model.StreamPayload.ItemDelta;
import io.turnstream.model.StreamPayload.ItemDone;
import io.turnstream.model.StreamPayload.ItemStart;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Assertions every stream of item payloads must pass, whichever provider it came from. */
public final class ItemInvariants {

    private ItemInvariants() {
    }

    /**
     * Ids are unique; every started item is closed exactly once (done, error, cancelled or withdrawn)
     * and nothing follows, but that an item done may be withdrawn once, later.
     */
    public static void assertEveryStartedItemIsClosedOnceAndNothingFollows(List<StreamPayload> payloads) {
        Set<String> started = new HashSet<>();
        Set<String> closed = new HashSet<>();
        Set<String> withdrawn = new HashSet<>();
        for (StreamPayload payload : itemPayloads(payloads)) {
            String id = itemId(payload);
            if (payload instanceof ItemStart) {
                assertThat(started.add(id)).as("item %s started once", id).isTrue();
            } else if (payload instanceof StreamPayload.ItemWithdrawn) {
                assertThat(started).as("withdrawal of a started item").contains(id);
                assertThat(withdrawn.add(id)).as("item %s withdrawn once", id).isTrue();
                closed.add(id);
            } else {
                assertThat(started).as("%s of a started item", payload.type()).contains(id);
                assertThat(closed).as("nothing after %s is closed", id).doesNotContain(id);
                if (!(payload instanceof ItemDelta)) {
                    closed.add(id);
                }
            }
        }
        assertThat(closed).as("every started item is closed").isEqualTo(started);
    }

    /** The final content of a streamed item is its initial content followed by its deltas. */
    public static void assertFinalContentIsTheStreamedText(List<StreamPayload> payloads) {
        Map<String, StringBuilder> streamed = new HashMap<>();
        for (StreamPayload payload : payloads) {
            if (payload instanceof ItemStart start) {
                streamed.put(start.itemId(), new StringBuilder(start.initialContent() == null ? "" : start.initialContent()));
            } else if (payload instanceof ItemDelta delta) {
                streamed.get(delta.itemId()).append(delta.deltaContent());
            } else if (payload instanceof ItemDone done && done.finalItem().content() != null) {
                assertThat(done.finalItem().content()).as("content of %s", done.itemId())
                        .isEqualTo(streamed.get(done.itemId()).toString());
            }
        }
    }

    public static String itemId(StreamPayload payload) {
        if (payload instanceof ItemStart p) {
            return p.itemId();
        } else if (payload instanceof ItemDelta p) {
            return p.itemId();
        } else if (payload instanceof ItemDone p) {
            return p.itemId();
        } else if (payload instanceof StreamPayload.ItemError p) {
            return p.itemId();
        } else if (payload instanceof StreamPayload.ItemCancelled p) {
            return p.itemId();
        } else if (payload instanceof StreamPayload.ItemWithdrawn p) {
            return p.itemId();
        }
        return null;
    }

    /** Payload types and item ids with runs of deltas counted, for comparing long streams. */
    public static List<String> shape(List<StreamPayload> payloads) {
        List<String> lines = new ArrayList<>();
        int deltas = 0;
        String deltaItem = null;
        for (StreamPayload payload : payloads) {
            if (payload instanceof ItemDelta delta) {
                deltas++;
                deltaItem = delta.itemId();
                continue;
            }
            if (deltas > 0) {
                lines.add("item_delta " + deltaItem + " x" + deltas);
                deltas = 0;
            }
            String id = itemId(payload);
            String type = payload instanceof ItemStart s ? " " + s.itemType()
                    : payload instanceof ItemDone d ? " " + d.finalItem().type()
                    : payload instanceof StreamPayload.TurnStatus t ? " " + t.status()
                    : payload instanceof StreamPayload.ToolStatus t ? " " + t.status() : "";
            lines.add(payload.type() + (id == null ? "" : " " + id) + type);
        }
        if (deltas > 0) {
            lines.add("item_delta " + deltaItem + " x" + deltas);
        }
        return lines;
    }

    private static List<StreamPayload> itemPayloads(List<StreamPayload> payloads) {
        return payloads.stream().filter(p -> itemId(p) != null).toList();
    }
}
