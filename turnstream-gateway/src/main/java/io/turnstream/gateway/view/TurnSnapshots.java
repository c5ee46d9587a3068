package io.turnstream.gateway.view;

import io.turnstream.model.ChangeType;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UpsertEnvelope;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Folding upserts into a turn's current state: per item (and for the lifecycle) the latest upsert wins. */
final class TurnSnapshots {

    private static final String NOT_AN_ITEM = "\u0000";

    private TurnSnapshots() {
    }

    /**
     * The latest envelope per item and the latest lifecycle event, ordered by seq; an item whose
     * latest upsert withdrew it is left out (its model call failed and was made again).
     *
     * @param maxSeq leave out envelopes above it (they are still to come live); 0 for no bound
     */
    static List<UpsertEnvelope> latestPerItem(Collection<UpsertEnvelope> envelopes, long maxSeq) {
        Map<String, UpsertEnvelope> latest = new HashMap<>();
        for (UpsertEnvelope envelope : envelopes) {
            if (maxSeq > 0 && envelope.seq() > maxSeq) {
                continue;
            }
            // the lifecycle and statuses apart from items: an item id cannot start with NUL
            String key = envelope.payload() instanceof UIUpsert item ? item.itemId() : NOT_AN_ITEM + envelope.payload().stateKey();
            latest.merge(key, envelope, (old, fresh) -> fresh.seq() > old.seq() ? fresh : old);
        }
        List<UpsertEnvelope> ordered = new ArrayList<>(latest.values());
        ordered.removeIf(envelope -> envelope.payload() instanceof UIUpsert item
                && item.changeType() == ChangeType.WITHDRAWN);
        ordered.sort(Comparator.comparingLong(UpsertEnvelope::seq));
        return ordered;
    }

    static List<UpsertEnvelope> concat(Collection<UpsertEnvelope> first, Collection<UpsertEnvelope> second) {
        List<UpsertEnvelope> all = new ArrayList<>(first);
        all.addAll(second);
        return all;
    }
}
