package io.turnstream.runtime;

import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.model.ItemType;
import io.turnstream.model.OutputItem;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The raw events a gateway would publish for one turn, in order: response_start, each item
 * streamed as start, deltas and done, then response_done. Deltas are numbered, so the expected
 * content of an item (the concatenation of its deltas) shows any loss, duplicate or reordering.
 */
public final class TurnScript {

    private final String runId;
    private final String turnId;
    private final List<StreamEvent> events;
    private final Map<String, String> expectedContent;

    private TurnScript(String runId, String turnId, List<StreamEvent> events, Map<String, String> expectedContent) {
        this.runId = runId;
        this.turnId = turnId;
        this.events = List.copyOf(events);
        this.expectedContent = Map.copyOf(expectedContent);
    }

    /** A turn with one long streamed message, the usual subject of crash and rebalance tests. */
    public static TurnScript longMessage(String turnId, int deltas) {
        return builder(turnId).message(messageId(turnId), deltas).build();
    }

    public static String messageId(String turnId) {
        return turnId + "-msg";
    }

    public static Builder builder(String turnId) {
        return new Builder(turnId);
    }

    public String runId() {
        return runId;
    }

    public String turnId() {
        return turnId;
    }

    public List<StreamEvent> events() {
        return events;
    }

    /** Events {@code [from, to)}, to send a turn in parts. */
    public List<StreamEvent> slice(int from, int to) {
        return events.subList(from, to);
    }

    public int size() {
        return events.size();
    }

    /** The concatenation of the item's deltas: what its final upsert must hold. */
    public String expectedContent(String itemId) {
        return expectedContent.get(itemId);
    }

    public static final class Builder {
        private final String turnId;
        private final String runId;
        private final List<StreamEvent> events = new ArrayList<>();
        private final Map<String, String> expected = new LinkedHashMap<>();

        private Builder(String turnId) {
            this.turnId = turnId;
            this.runId = "run-" + turnId;
            add(new StreamPayload.ResponseStart("resp-" + turnId, turnId, "thread-" + turnId, null, "model-test",
                    "sim", System.currentTimeMillis()));
        }

        /** An agent message streamed in {@code deltas} numbered deltas of about 40 characters (10 tokens). */
        public Builder message(String itemId, int deltas) {
            return streamed(itemId, ItemType.MESSAGE, deltas);
        }

        public Builder reasoning(String itemId, int deltas) {
            return streamed(itemId, ItemType.REASONING, deltas);
        }

        public Builder functionCall(String itemId, String toolName, String argumentsJson, String callId) {
            add(new StreamPayload.ItemStart(itemId, ItemType.FUNCTION_CALL, null, toolName, null, callId, null));
            add(new StreamPayload.ItemDone(itemId, new OutputItem(itemId, ItemType.FUNCTION_CALL, null, null, toolName,
                    TextNode.valueOf(argumentsJson), callId, null, null, null)));
            return this;
        }

        public TurnScript build() {
            add(new StreamPayload.ResponseDone("resp-" + turnId, ResponseStatus.COMPLETE, new StreamPayload.Usage(10, 20, 30), "stop"));
            return new TurnScript(runId, turnId, events, expected);
        }

        private Builder streamed(String itemId, ItemType itemType, int deltas) {
            add(new StreamPayload.ItemStart(itemId, itemType, null, null, null, null, null));
            StringBuilder content = new StringBuilder();
            for (int i = 1; i <= deltas; i++) {
                String delta = String.format("[%s #%04d] the quick brown fox. ", itemId, i);
                content.append(delta);
                add(new StreamPayload.ItemDelta(itemId, delta));
            }
            add(new StreamPayload.ItemDone(itemId, null));
            expected.put(itemId, content.toString());
            return this;
        }

        private void add(StreamPayload payload) {
            events.add(StreamEvent.of(turnId + "-e" + events.size(), System.currentTimeMillis(), runId, payload));
        }
    }
}
