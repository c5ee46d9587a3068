package io.turnstream.gateway.provider;

import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.ItemType;
import io.turnstream.model.Origins;
import io.turnstream.model.OutputItem;
import io.turnstream.model.StreamPayload;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The items of one model step and the payloads that describe them. Adapters decide when an item
 * starts, grows and ends; this class names items, keeps their content, emits the contract's
 * payloads in order, and guarantees every started item is closed exactly once (done, error or
 * cancelled) and nothing is emitted for it afterwards.
 */
public final class StepItems {

    /** Receives the step's payloads in order. */
    @FunctionalInterface
    public interface Sink {
        void emit(StreamPayload payload);
    }

    private final String idPrefix;
    private final String providerId;
    private final Sink sink;
    private final Set<Item> open = new LinkedHashSet<>();
    private final List<ToolCallRequest> toolCalls = new ArrayList<>();
    private int nextItem;
    private int published;
    private boolean withdrawOnRetryableFailure;
    private boolean withdrawn;

    /**
     * @param idPrefix makes item ids unique within the run, e.g. {@code {runId}-s2}
     * @param providerId recorded on every final item
     */
    public StepItems(String idPrefix, String providerId, Sink sink) {
        this.idPrefix = idPrefix;
        this.providerId = providerId;
        this.sink = sink;
    }

    /**
     * The items of a step that another gateway was streaming when it stopped: ids go on from
     * {@code nextItem}, and {@code openItems} (id to item type) are open, so that {@link #withdraw()}
     * closes them.
     */
    public static StepItems resumed(String idPrefix, String providerId, Sink sink, int nextItem,
                                    Map<String, ItemType> openItems) {
        StepItems items = new StepItems(idPrefix, providerId, sink);
        items.nextItem = nextItem;
        openItems.forEach((id, type) -> items.open.add(items.new Item(id, type, null, null)));
        return items;
    }

    public Item startMessage(String initialText) {
        return start(ItemType.MESSAGE, null, null, initialText);
    }

    public Item startReasoning(String initialText) {
        return start(ItemType.REASONING, null, null, initialText);
    }

    /** @param callId may be null when the provider sends it later; see {@link Item#callId(String)} */
    public Item startFunctionCall(String name, String callId) {
        return start(ItemType.FUNCTION_CALL, name, callId, null);
    }

    private Item start(ItemType type, String name, String callId, String initialText) {
        Item item = new Item(idPrefix + "-" + nextItem++, type, name, callId);
        open.add(item);
        String initial = initialText == null || initialText.isEmpty() ? null : initialText;
        if (initial != null) {
            item.content.append(initial);
        }
        String origin = type == ItemType.MESSAGE ? Origins.AGENT : null;
        emit(new StreamPayload.ItemStart(item.id, type, initial, name, null, callId, origin));
        return item;
    }

    /** How many payloads this step has emitted. */
    public int published() {
        return published;
    }

    /** The function calls that completed, in the order they completed. */
    public List<ToolCallRequest> toolCalls() {
        return List.copyOf(toolCalls);
    }

    /** Ends every open item normally, with what it has so far. */
    public void closeAll() {
        List.copyOf(open).forEach(item -> item.done(null));
    }

    public void failAll(ErrorInfo error) {
        List.copyOf(open).forEach(item -> item.fail(error));
    }

    public void cancelAll() {
        List.copyOf(open).forEach(Item::cancel);
    }

    /**
     * Takes back what the step shows, because it will be called again: every open item ends with
     * {@code item_cancelled}, so a UI drops it. Items already done stay, and so do the tool calls
     * that completed ({@link #toolCalls()}): they will get no result, and the caller ends them.
     * The next attempt's items come from {@link #nextAttempt()}.
     */
    public void withdraw() {
        withdrawn = true;
        cancelAll();
    }

    /** Whether {@link #withdraw()} was called. */
    public boolean withdrawn() {
        return withdrawn;
    }

    /**
     * The items of the step's next attempt: nothing published or collected yet, and ids going on
     * from this attempt's, so they are new items of the same step ({@code {idPrefix}-{n}}).
     */
    public StepItems nextAttempt() {
        StepItems next = new StepItems(idPrefix, providerId, sink);
        next.nextItem = nextItem;
        return next;
    }

    /** When set, a failure a retry may cure withdraws the open items rather than failing them: the caller will retry. */
    public void withdrawOnRetryableFailure(boolean enabled) {
        withdrawOnRetryableFailure = enabled;
    }

    public boolean withdrawsOnRetryableFailure() {
        return withdrawOnRetryableFailure;
    }

    private void emit(StreamPayload payload) {
        published++;
        sink.emit(payload);
    }

    /** One item of the step. */
    public final class Item {
        private final String id;
        private final ItemType type;
        private final StringBuilder content = new StringBuilder();
        private final StringBuilder arguments = new StringBuilder();
        private String name;
        private String callId;

        private Item(String id, ItemType type, String name, String callId) {
            this.id = id;
            this.type = type;
            this.name = name;
            this.callId = callId;
        }

        public String id() {
            return id;
        }

        public ItemType type() {
            return type;
        }

        public boolean isOpen() {
            return open.contains(this);
        }

        /** Streams text into a message or reasoning item; empty text emits nothing. */
        public void append(String text) {
            if (!isOpen() || text == null || text.isEmpty()) {
                return;
            }
            content.append(text);
            emit(new StreamPayload.ItemDelta(id, text));
        }

        public String content() {
            return content.toString();
        }

        /** Accumulates a function call's argument JSON; not streamed, the contract carries it in {@code item_done}. */
        public void appendArguments(String fragment) {
            if (fragment != null) {
                arguments.append(fragment);
            }
        }

        /** The provider's own complete arguments, which win over the accumulated fragments. */
        public void replaceArguments(String complete) {
            arguments.setLength(0);
            arguments.append(complete);
        }

        public String arguments() {
            return arguments.toString();
        }

        public void name(String lateName) {
            if (name == null) {
                name = lateName;
            }
        }

        public void callId(String lateCallId) {
            if (callId == null) {
                callId = lateCallId;
            }
        }

        /**
         * Ends the item normally.
         *
         * @param finalContent the provider's own final text, which wins over the streamed text; null to
         *                     keep what was streamed
         */
        public void done(String finalContent) {
            if (!open.remove(this)) {
                return;
            }
            OutputItem finalItem;
            if (type == ItemType.FUNCTION_CALL) {
                String args = arguments.toString().isBlank() ? "{}" : arguments.toString();
                String call = callId != null ? callId : "call_" + id;
                toolCalls.add(new ToolCallRequest(id, call, name, args));
                finalItem = new OutputItem(id, type, null, null, name, TextNode.valueOf(args), call, null, null,
                        providerId);
            } else {
                String text = finalContent != null ? finalContent : content.toString();
                String origin = type == ItemType.MESSAGE ? Origins.AGENT : null;
                finalItem = new OutputItem(id, type, text, origin, null, null, null, null, null, providerId);
            }
            emit(new StreamPayload.ItemDone(id, finalItem));
        }

        public void fail(ErrorInfo error) {
            if (open.remove(this)) {
                emit(new StreamPayload.ItemError(id, error));
            }
        }

        public void cancel() {
            if (open.remove(this)) {
                emit(new StreamPayload.ItemCancelled(id));
            }
        }
    }
}
