package io.turnstream.topology;

import io.turnstream.model.ItemAppend;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UpsertEnvelope;
import java.util.HashMap;
import java.util.Map;

/**
 * The client rule of docs/topology.md ("Live text") for {@code llm.upserts} with {@code llm.item-appends}, keyed
 * {@code turnId/itemId}: the latest upsert's content replaces the text; an append extends it when its
 * offset is at or before the text's end, adding only what is not yet shown; an append beyond the end
 * (a gap) waits for the next upsert.
 */
final class LiveTextClient {

    private final Map<String, String> shown = new HashMap<>();
    private final Map<String, Long> versions = new HashMap<>();

    void accept(UpsertEnvelope envelope) {
        if (envelope.payload() instanceof UIUpsert upsert) {
            String key = envelope.turnId() + "/" + upsert.itemId();
            if (upsert.version() > versions.getOrDefault(key, 0L)) {
                versions.put(key, upsert.version());
                shown.put(key, upsert.content());
            }
        }
    }

    void accept(ItemAppend append) {
        String key = append.turnId() + "/" + append.itemId();
        String text = shown.getOrDefault(key, "");
        long length = text.codePointCount(0, text.length());
        long end = append.offset() + append.text().codePointCount(0, append.text().length());
        if (append.offset() > length || end <= length) {
            return;
        }
        int alreadyShown = append.text().offsetByCodePoints(0, Math.toIntExact(length - append.offset()));
        shown.put(key, text + append.text().substring(alreadyShown));
    }

    Map<String, String> shown() {
        return shown;
    }
}
