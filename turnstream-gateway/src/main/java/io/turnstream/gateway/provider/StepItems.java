package io.turnstream.gateway.provider;

import io.turnstream.model.ErrorInfo;
import io.turnstream.model.ItemType;
import io.turnstream.model.Origins;
import io.turnstream.model.OutputItem;
import io.turnstream.model.StepItemIds;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.ToolState;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The items of one model step and the payloads that describe them. Adapters decide when an item
 * starts, grows and ends; this class names items, keeps their content, emits the contract's
 * payloads in order, and guarantees every started item is closed exactly once (done, error,
 * cancelled or withdrawn) and nothing is emitted for it afterwards.
 *
 * <p>A function call's {@code item_done} is what makes the topology publish it to
 * {@code llm.tool-calls}, so it is not emitted here: a call that completes is only collected
 * ({@link #toolCalls()}), and the agent loop emits its {@code item_done}
 * ({@link ToolCallRequest#itemDone}) after it recorded the step as committed. A call of an attempt
 * that fails and is made again is withdrawn instead, and never runs. A call of a read-only tool is the
 * exception: its {@code item_done} goes out as it completes ({@link #startingEarly}). Its {@code pending} status is
 * emitted as soon as the call starts streaming (once its call id is known).
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
    /** Every item this attempt started (or, resumed, took over), for {@link #withdraw()}. */
    private final List<String> started = new ArrayList<>();
    private final List<ToolCallRequest> toolCalls = new ArrayList<>();
    private int nextItem;
    private int published;
    private boolean withdrawOnRetryableFailure;
    private boolean withdrawn;
    /** The message a continued step left for this one; this attempt's first message takes it. */
    private Carried carried;
    private boolean carryTaken;
    /** Read-only tools: their calls are released as soon as they complete (see {@link #startingEarly}). */
    private Set<String> startEarly = Set.of();
    /** The carried message while it is open in the log: this attempt's first message is it. */
    private Item carriedItem;

    /**
     * A message that a step stopped at the output token limit left open, so that the text of the step that
     * continues it joins the same item ({@code max_tokens} continuation).
     *
     * @param text everything the item holds so far
     * @param open the item is still open in the log: the continuation streams into it; false when it was
     *             withdrawn (an attempt that streamed into it failed): the continuation's first message is a
     *             new item that starts with {@code text}
     */
    public record Carried(String itemId, String text, boolean open) {
    }

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
     * {@code nextItem}, and {@code shown} (its items not withdrawn yet, open or done) are this
     * attempt's, so that {@link #withdraw()} takes them back.
     */
    public static StepItems resumed(String idPrefix, String providerId, Sink sink, int nextItem, List<String> shown) {
        StepItems items = new StepItems(idPrefix, providerId, sink);
        items.nextItem = nextItem;
        items.started.addAll(shown);
        return items;
    }

    /**
     * Items whose first message continues the message a {@code max_tokens} step left: into that item
     * while it is open, else as a new item that starts with its text. A message left open that no
     * message of this step joins is closed with the step's other items.
     *
     * @param carried null when there is none
     * @param touched a previous attempt (on a gateway that stopped) streamed into the open item or closed it:
     *                {@link #withdraw()} takes it back
     */
    public StepItems carrying(Carried carried, boolean touched) {
        this.carried = carried;
        if (carried != null && carried.open()) {
            carriedItem = new Item(carried.itemId(), ItemType.MESSAGE, null, null);
            carriedItem.carriedText = carried.text();
            carriedItem.content.append(carried.text());
            carriedItem.touched = touched;
            open.add(carriedItem);
        }
        return this;
    }

    /**
     * Calls of these tools (declared read-only, concurrency-safe) get their {@code item_done} as soon as they
     * complete, so the executor may start them while the model still streams (streaming tool execution);
     * a withdrawal still takes their items back, but they may have run, which only reading makes harmless.
     */
    public StepItems startingEarly(Set<String> readOnlyTools) {
        startEarly = Set.copyOf(readOnlyTools);
        return this;
    }

    /** What the step's item ids start with, e.g. {@code {runId}-s2}: it names the step. */
    public String idPrefix() {
        return idPrefix;
    }

    public Item startMessage(String initialText) {
        Carried joins = carried;
        if (joins == null || carryTaken) {
            return start(ItemType.MESSAGE, null, null, initialText);
        }
        carryTaken = true;
        if (!joins.open()) {
            Item item = start(ItemType.MESSAGE, null, null, joins.text() + (initialText == null ? "" : initialText));
            item.carriedText = joins.text();
            return item;
        }
        carriedItem.append(initialText);
        return carriedItem;
    }

    public Item startReasoning(String initialText) {
        return start(ItemType.REASONING, null, null, initialText);
    }

    /** @param callId may be null when the provider sends it later; see {@link Item#callId(String)} */
    public Item startFunctionCall(String name, String callId) {
        return start(ItemType.FUNCTION_CALL, name, callId, null);
    }

    private Item start(ItemType type, String name, String callId, String initialText) {
        Item item = new Item(StepItemIds.item(idPrefix, nextItem++), type, name, callId);
        open.add(item);
        started.add(item.id);
        String initial = initialText == null || initialText.isEmpty() ? null : initialText;
        if (initial != null) {
            item.content.append(initial);
        }
        String origin = type == ItemType.MESSAGE ? Origins.AGENT : null;
        emit(new StreamPayload.ItemStart(item.id, type, initial, name, null, callId, origin));
        if (callId != null) {
            item.pending();
        }
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
        showCarried();
        List.copyOf(open).forEach(item -> item.done(null));
    }

    public void failAll(ErrorInfo error) {
        showCarried();
        List.copyOf(open).forEach(item -> item.fail(error));
    }

    public void cancelAll() {
        showCarried();
        List.copyOf(open).forEach(Item::cancel);
    }

    /** A carried message that was withdrawn and that no message of this step took: its text is shown again. */
    private void showCarried() {
        if (carried != null && !carried.open() && !carryTaken) {
            startMessage(null);
        }
    }

    /**
     * Takes back everything the attempt showed, because the step will be called again: every item
     * it started, open or done, gets {@code item_withdrawn}, so the topology emits a {@code withdrawn}
     * upsert and a UI removes it. Its function calls were never committed, so they never run and
     * get no output. The next attempt's items come from {@link #nextAttempt()}.
     */
    public void withdraw() {
        withdrawn = true;
        open.clear();
        toolCalls.clear();
        started.forEach(id -> emit(new StreamPayload.ItemWithdrawn(id)));
        started.clear();
        // the carried message is the committed step's, not this attempt's: it stays to be joined (or closed)
        carryTaken = false;
        if (carriedItem != null && carriedItem.touched) {
            // what this attempt wrote into it is taken back with it; its text is shown again, as a new item
            emit(new StreamPayload.ItemWithdrawn(carriedItem.id));
            carried = new Carried(carriedItem.id, carriedItem.carriedText, false);
            carriedItem = null;
        } else if (carriedItem != null) {
            open.add(carriedItem);
        }
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
        return next.startingEarly(startEarly).carrying(carriedItem != null
                ? new Carried(carriedItem.id, carriedItem.carriedText, true) : carried, false);
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
        /** Some of the arguments went out as {@code item_delta}s. */
        private boolean argumentsStreamed;
        /** For a message that continues a {@code max_tokens} step's: that step's text, which it starts with. */
        private String carriedText;
        /** This attempt streamed into or closed a carried message that was open: a withdrawal takes it back. */
        private boolean touched;
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
            touched = true;
            emit(new StreamPayload.ItemDelta(id, text));
        }

        public String content() {
            return content.toString();
        }

        /**
         * Streams a fragment of a function call's argument JSON as an {@code item_delta} (so clients see
         * the input as it is written: the topology's appends, {@code /api/chat}'s
         * {@code tool-input-delta}); the whole arguments are still what its {@code item_done} carries.
         */
        public void appendArguments(String fragment) {
            if (fragment == null || fragment.isEmpty()) {
                return;
            }
            arguments.append(fragment);
            if (isOpen()) {
                argumentsStreamed = true;
                emit(new StreamPayload.ItemDelta(id, fragment));
            }
        }

        /**
         * The provider's own complete arguments, which win over the streamed fragments in {@code item_done}.
         * Arguments that come only whole are streamed as one fragment: a client-side call, which gets no
         * {@code item_done}, is completed by the topology from what was streamed.
         */
        public void replaceArguments(String complete) {
            boolean nothingStreamed = arguments.isEmpty();
            arguments.setLength(0);
            if (nothingStreamed) {
                appendArguments(complete);
            } else {
                arguments.append(complete);
            }
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
            if (callId == null && lateCallId != null && isOpen()) {
                callId = lateCallId;
                pending();
            }
        }

        /** A tool call's first status, as soon as it streams and has its call id. */
        private void pending() {
            if (type == ItemType.FUNCTION_CALL) {
                emit(new StreamPayload.ToolStatus(id, callId, name, ToolState.PENDING, null, null, null));
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
            touched = true;
            if (type == ItemType.FUNCTION_CALL) {
                String args = arguments.toString().isBlank() ? "{}" : arguments.toString();
                if (callId == null) {
                    callId("call_" + id);
                }
                if (!argumentsStreamed) {
                    // arguments that came whole (or not at all) are the item's content too
                    emit(new StreamPayload.ItemDelta(id, args));
                }
                // its item_done waits for the step's commit (see the class comment), unless the tool only reads
                ToolCallRequest call = new ToolCallRequest(id, callId, name, args);
                toolCalls.add(call);
                if (startEarly.contains(name)) {
                    emit(call.itemDone(providerId));
                }
                return;
            }
            String text = finalContent == null ? content.toString()
                    : carriedText == null ? finalContent : carriedText + finalContent;
            String origin = type == ItemType.MESSAGE ? Origins.AGENT : null;
            emit(new StreamPayload.ItemDone(id, new OutputItem(id, type, text, origin, null, null, null, null, null,
                    providerId)));
        }

        public void fail(ErrorInfo error) {
            if (carriedText != null) {
                // a committed step's text: the failure ends the step, not what the earlier step said
                done(null);
            } else if (open.remove(this)) {
                ended(ToolState.ERROR, error);
                emit(new StreamPayload.ItemError(id, error));
            }
        }

        public void cancel() {
            if (carriedText != null) {
                done(null);
            } else if (open.remove(this)) {
                ended(ToolState.ABORTED, null);
                emit(new StreamPayload.ItemCancelled(id));
            }
        }

        /** A call that shows {@code pending} and ends unfinished ends its lifecycle too: it never runs. */
        private void ended(ToolState status, ErrorInfo why) {
            if (type == ItemType.FUNCTION_CALL && callId != null) {
                emit(new StreamPayload.ToolStatus(id, callId, name, status, null, null, why));
            }
        }
    }
}
