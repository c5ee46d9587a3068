package io.turnstream.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.turnstream.model.ChangeType;
import io.turnstream.model.ItemAppend;
import io.turnstream.model.PayloadType;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiItemType;
import io.turnstream.model.UpsertEnvelope;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The appends invariant of ClusterFaultsTest on the records of the items it found (docs/benchmarks.md,
 * "Cluster faults"; the topology's side is ItemAppendsTest's {@code anItemWithdrawnWhileOpen...}
 * tests), and on the records it must refuse.
 */
class AppendsInvariantTest {

    private static final String TURN = "turn-1";
    private static final String RUN = "run-1";
    private static final String ITEM = "run-1-s3-1";

    private final List<UpsertEnvelope> upserts = new ArrayList<>();
    private final List<ItemAppend> appends = new ArrayList<>();
    private final List<StreamEvent> raw = new ArrayList<>();

    @Test
    void anItemWithdrawnWhileOpenMayEndWithAppendsAheadOfItsLastStreamingUpsert() {
        streamed("`README.md` ", "has ", "two");
        upsert(ChangeType.CREATED, "`README.md` ");
        append("`README.md` ", "has ");
        upsert(ChangeType.WITHDRAWN, "");

        assertThat(check()).isOne();
    }

    @Test
    void anItemWithdrawnWhileOpenWithAppendsBeyondWhatTheGatewayStreamedIsRefused() {
        streamed("`README.md` ", "has ");
        upsert(ChangeType.CREATED, "`README.md` ");
        append("`README.md` ", "has ", "has ");
        upsert(ChangeType.WITHDRAWN, "");

        assertThatThrownBy(this::check).hasMessageContaining("the start of what the gateway streamed");
    }

    /** The item of a later run: a delta reached the gradient (an upsert at once) and the withdrawal came before the tick. */
    @Test
    void anItemWithdrawnWhileOpenMayEndWithAppendsBehindItsLastStreamingUpsert() {
        streamed("`README.md` has 3 lines. It ", "begins with:\n\n", "# Launch");
        upsert(ChangeType.CREATED, "`README.md` has 3 lines. It ");
        append("`README.md` has 3 lines. It ");
        upsert(ChangeType.UPDATED, "`README.md` has 3 lines. It begins with:\n\n");
        upsert(ChangeType.WITHDRAWN, "");

        assertThat(check()).isOne();
    }

    @Test
    void anItemWithdrawnWhileOpenWhoseLastUpsertHoldsWhatWasNotStreamedIsRefused() {
        streamed("`README.md` ", "has ");
        upsert(ChangeType.CREATED, "`README.md` had");
        append("`README.md` ");
        upsert(ChangeType.WITHDRAWN, "");

        assertThatThrownBy(this::check).hasMessageContaining("last streaming upsert of item " + ITEM);
    }

    @Test
    void aCompletedItemsAppendsRebuildItsContentExactly() {
        streamed("`README.md` ", "has ");
        upsert(ChangeType.CREATED, "`README.md` ");
        upsert(ChangeType.COMPLETED, "`README.md` has");
        append("`README.md` ", "has ");

        assertThatThrownBy(this::check).hasMessageContaining("appends of item " + ITEM);
    }

    @Test
    void anItemWithdrawnAfterItCompletedKeepsItsCompletedContentExactly() {
        streamed("`README.md` ", "has ");
        upsert(ChangeType.COMPLETED, "`README.md` has two");
        append("`README.md` ", "has ");
        upsert(ChangeType.WITHDRAWN, "");

        assertThatThrownBy(this::check).hasMessageContaining("appends of item " + ITEM);
    }

    private int check() {
        return AppendsInvariant.assertAppendsRebuildEveryItem(List.of(TURN), Map.of(TURN, RUN), upserts, appends,
                Map.of(RUN, raw));
    }

    private void streamed(String initial, String... deltas) {
        raw.add(StreamEvent.of("e0", 0, RUN, new StreamPayload.ItemStart(ITEM, "message", initial, null, null, null,
                "agent")));
        for (String delta : deltas) {
            raw.add(StreamEvent.of("e" + raw.size(), 0, RUN, new StreamPayload.ItemDelta(ITEM, delta)));
        }
    }

    private void upsert(ChangeType change, String content) {
        long version = upserts.size() + 1;
        UIUpsert upsert = change == ChangeType.WITHDRAWN
                ? UIUpsert.withdrawn(TURN, "thread-1", ITEM, UiItemType.MESSAGE, version, null)
                : UIUpsert.text(TURN, "thread-1", ITEM, UiItemType.MESSAGE, change, version, content, "agent", null);
        upserts.add(new UpsertEnvelope("u" + version, 0, TURN, version, PayloadType.ITEM_UPSERT, upsert));
    }

    private void append(String... texts) {
        for (String text : texts) {
            long offset = appends.stream().mapToLong(a -> a.text().codePointCount(0, a.text().length())).sum();
            appends.add(new ItemAppend(TURN, ITEM, appends.size() + 1, offset, text, 0));
        }
    }
}
