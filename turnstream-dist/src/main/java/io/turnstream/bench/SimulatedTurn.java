package io.turnstream.bench;

import io.turnstream.model.ItemType;
import io.turnstream.model.OutputItem;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;

/**
 * The raw events a gateway publishes for one turn of a reasoning model, computed on demand from a
 * few numbers so that a thousand open turns cost no memory: response_start, a reasoning item, a
 * message item (each as item_start, fixed-size deltas, item_done with the full text as the
 * gateway sends it), response_done. Events sit on slots one delta interval apart; the content is
 * ASCII, so characters, code points and UTF-8 bytes coincide and a delta's end offset is
 * {@code (k + 1) * deltaChars}.
 */
final class SimulatedTurn {

    /** Which item of the turn an upsert belongs to. */
    enum Item { REASONING, MESSAGE }

    private static final String CORPUS = "the quick brown fox jumps over the lazy dog while streams of tokens flow "
            + "through kafka topics into state stores and out again as upserts that a user interface binds ";

    final String runId;
    final String turnId;
    final int reasoningDeltas;
    final int messageDeltas;
    final int deltaChars;
    /** Intended time of slot 0, in {@link System#nanoTime()} terms. */
    final long startNanos;
    private final int textOffset;

    SimulatedTurn(String runId, int reasoningTokens, int messageTokens, int tokensPerDelta, long startNanos) {
        this.runId = runId;
        this.turnId = "turn-" + runId;
        this.deltaChars = tokensPerDelta * 4;
        this.reasoningDeltas = Math.max(1, reasoningTokens / tokensPerDelta);
        this.messageDeltas = Math.max(1, messageTokens / tokensPerDelta);
        this.startNanos = startNanos;
        this.textOffset = Math.floorMod(runId.hashCode(), CORPUS.length());
    }

    /** A turn whose reasoning is a single delta, so its message dominates: the write-amplification runs. */
    static SimulatedTurn longMessage(String runId, int messageTokens, int tokensPerDelta) {
        return new SimulatedTurn(runId, tokensPerDelta, messageTokens, tokensPerDelta, 0);
    }

    int size() {
        return reasoningDeltas + messageDeltas + 6;
    }

    String itemId(Item item) {
        return runId + (item == Item.REASONING ? "-reasoning" : "-msg");
    }

    int deltas(Item item) {
        return item == Item.REASONING ? reasoningDeltas : messageDeltas;
    }

    /** Slot of delta {@code k} of an item. */
    int deltaSlot(Item item, int k) {
        return item == Item.REASONING ? 1 + k : reasoningDeltas + 2 + k;
    }

    /** Slot of an item's item_done. */
    int doneSlot(Item item) {
        return item == Item.REASONING ? reasoningDeltas + 1 : reasoningDeltas + messageDeltas + 2;
    }

    /** Slot of event {@code i}. */
    int slot(int i) {
        int r = reasoningDeltas;
        if (i <= 1) {
            return 0;
        } else if (i <= r + 1) {
            return i - 1;
        } else if (i <= r + 3) {
            return r + 1;
        } else if (i <= r + messageDeltas + 3) {
            return i - 2;
        }
        return r + messageDeltas + 2;
    }

    /** The item whose delta event {@code i} is, or null when it is no delta. */
    Item deltaItem(int i) {
        if (i >= 2 && i <= reasoningDeltas + 1) {
            return Item.REASONING;
        }
        return i >= reasoningDeltas + 4 && i <= reasoningDeltas + messageDeltas + 3 ? Item.MESSAGE : null;
    }

    /** Which delta of its item event {@code i} is; only for delta events. */
    int deltaIndex(int i) {
        return deltaItem(i) == Item.REASONING ? i - 2 : i - reasoningDeltas - 4;
    }

    boolean isLast(int i) {
        return i == size() - 1;
    }

    /** Event {@code i} of the turn. */
    StreamEvent event(int i) {
        int r = reasoningDeltas;
        int m = messageDeltas;
        StreamPayload payload;
        if (i == 0) {
            payload = new StreamPayload.ResponseStart("resp-" + runId, turnId, "thread-" + runId, null, "sim-model",
                    "sim", 0);
        } else if (i == 1) {
            payload = itemStart(Item.REASONING);
        } else if (i <= r + 1) {
            payload = new StreamPayload.ItemDelta(itemId(Item.REASONING), delta(Item.REASONING, i - 2));
        } else if (i == r + 2) {
            payload = itemDone(Item.REASONING);
        } else if (i == r + 3) {
            payload = itemStart(Item.MESSAGE);
        } else if (i <= r + m + 3) {
            payload = new StreamPayload.ItemDelta(itemId(Item.MESSAGE), delta(Item.MESSAGE, i - r - 4));
        } else if (i == r + m + 4) {
            payload = itemDone(Item.MESSAGE);
        } else {
            payload = new StreamPayload.ResponseDone("resp-" + runId, ResponseStatus.COMPLETE,
                    new StreamPayload.Usage(100, (long) (r + m) * deltaChars / 4, 100 + (long) (r + m) * deltaChars / 4),
                    "stop");
        }
        return StreamEvent.of(runId + ":" + i, System.currentTimeMillis(), runId, payload);
    }

    /** The final text of an item: the concatenation of its deltas. */
    String content(Item item) {
        StringBuilder text = new StringBuilder(deltas(item) * deltaChars);
        for (int k = 0; k < deltas(item); k++) {
            text.append(delta(item, k));
        }
        return text.toString();
    }

    private StreamPayload itemStart(Item item) {
        ItemType type = item == Item.REASONING ? ItemType.REASONING : ItemType.MESSAGE;
        return new StreamPayload.ItemStart(itemId(item), type, null, null, null, null, null);
    }

    private StreamPayload itemDone(Item item) {
        ItemType type = item == Item.REASONING ? ItemType.REASONING : ItemType.MESSAGE;
        return new StreamPayload.ItemDone(itemId(item),
                new OutputItem(itemId(item), type, content(item), null, null, null, null, null, null, "sim"));
    }

    private String delta(Item item, int k) {
        int from = (textOffset + (item.ordinal() * 7 + k) * deltaChars) % CORPUS.length();
        StringBuilder text = new StringBuilder(deltaChars);
        while (text.length() < deltaChars) {
            int to = Math.min(CORPUS.length(), from + deltaChars - text.length());
            text.append(CORPUS, from, to);
            from = 0;
        }
        return text.toString();
    }
}
