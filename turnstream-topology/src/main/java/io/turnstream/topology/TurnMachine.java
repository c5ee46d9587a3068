package io.turnstream.topology;

import io.turnstream.model.ChangeType;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.ItemType;
import io.turnstream.model.Json;
import io.turnstream.model.Origins;
import io.turnstream.model.OutputItem;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.StreamPayload.ItemCancelled;
import io.turnstream.model.StreamPayload.ItemDelta;
import io.turnstream.model.StreamPayload.ItemDone;
import io.turnstream.model.StreamPayload.ItemError;
import io.turnstream.model.StreamPayload.ItemStart;
import io.turnstream.model.StreamPayload.ItemWithdrawn;
import io.turnstream.model.StreamPayload.ResponseDone;
import io.turnstream.model.StreamPayload.ResponseError;
import io.turnstream.model.StreamPayload.ResponseStart;
import io.turnstream.model.ToolCall;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiPayloadType;
import io.turnstream.runtime.TenantClaims;
import io.turnstream.topology.DeadlineQueue.Deadline;
import io.turnstream.topology.DeadlineQueue.Kind;
import java.util.Comparator;
import java.util.List;
import java.util.function.LongSupplier;
import org.apache.kafka.common.header.Headers;

/**
 * The turn logic of the topology as a plain state machine, driven by {@link UpsertProcessor}: it
 * turns the raw StreamEvents of each run into upserts (buffers item content, emits on the batch
 * gradient, holds user messages, closes turns, routes completed function calls) and, on each tick,
 * handles the deadlines that fell due (batch timeouts, idle turns, forgotten turns, item-state
 * tombstones) and sends the armed appends.
 *
 * <p>It knows nothing of Kafka Streams' processor API: its state is in the stores it is given, its
 * records go to {@link Sinks}, time comes from a clock, and each event arrives with the offset that
 * names its item's content ({@link ItemState#handle}). A turn is {@link TurnPhase#NOT_STARTED},
 * {@link TurnPhase#OPEN} or {@link TurnPhase#CLOSED}; what an item emits depends on its
 * {@link ItemState.Mode}.
 */
final class TurnMachine {

    /** Where a run's turn is. */
    enum TurnPhase {
        /** No {@code response_start} seen (or the closed turn was forgotten). */
        NOT_STARTED,
        /** Started, taking events. */
        OPEN,
        /** Closed; a marker remains until the closed-turn retention ends, so late events are named. */
        CLOSED;

        static TurnPhase of(TurnState turn) {
            return turn == null ? NOT_STARTED : turn.closed ? CLOSED : OPEN;
        }
    }

    /** Why an event was not applied, and the turn it concerned (null before one is known). */
    record Rejection(String reason, String turnId) {
    }

    /** Bounds the work of one punctuation; the rest is picked up by the next tick. */
    private static final int MAX_DEADLINES_PER_TICK = 10_000;
    private static final String USER_PROMPT_SUFFIX = "-user-prompt";
    private static final String KEY_SEPARATOR = "\u0000";

    private final TopologyConfig config;
    private final GradientBatcher batcher;
    private final StateCache<TurnState> turns;
    private final StateCache<ItemState> items;
    private final ItemBuffer buffer;
    private final DeadlineQueue deadlines;
    private final UpsertEmitter emitter;
    private final ItemAppends appends;
    private final LongSupplier clock;
    /** Whether the first tick armed the appends of every open item (see {@link ItemAppends}). */
    private boolean openItemsArmed;
    /** The offset of the event being applied: an item started by it takes it as its handle. */
    private long offset;

    TurnMachine(TopologyConfig config, StateCache<TurnState> turns, StateCache<ItemState> items, ItemBuffer buffer,
                DeadlineQueue deadlines, Sinks sinks, LongSupplier clock) {
        this.config = config;
        this.batcher = new GradientBatcher(config.gradient(), config.minGrowthFraction());
        this.turns = turns;
        this.items = items;
        this.buffer = buffer;
        this.deadlines = deadlines;
        this.emitter = new UpsertEmitter(sinks, clock, config);
        this.appends = new ItemAppends(sinks, clock, config, buffer);
        this.clock = clock;
    }

    /**
     * Applies one event of run {@code key} (the input record's key), read from {@code offset} with
     * these headers; returns why it was rejected, or null.
     */
    Rejection onEvent(String key, StreamEvent event, Headers headers, long offset) {
        String problem = invalidReason(key, event);
        if (problem != null) {
            return new Rejection(problem, null);
        }
        this.offset = offset;
        String runId = event.runId() != null ? event.runId() : key;
        TurnState turn = turns.get(runId);
        boolean start = event.payload() instanceof ResponseStart;
        switch (TurnPhase.of(turn)) {
            case NOT_STARTED -> {
                if (start) {
                    ResponseStart responseStart = (ResponseStart) event.payload();
                    String untrusted = config.claims().problem(responseStart.tenantId(), runId, TenantClaims.claimIn(headers));
                    if (untrusted != null) {
                        // the turn never starts: its later events are dead-lettered as events of no open turn
                        return new Rejection("response_start not trusted: " + untrusted, responseStart.turnId());
                    }
                    startTurn(runId, responseStart, event, headers);
                    return null;
                }
                return new Rejection(event.type() + " before response_start: no open turn for run " + runId, null);
            }
            case CLOSED -> {
                return new Rejection(start ? "response_start for a turn that already closed"
                        : event.type() + " after the turn closed", turn.turnId);
            }
            default -> {
                if (start) {
                    return new Rejection("duplicate response_start", turn.turnId);
                }
                turn.lastEventMs = now();
                String rejected = apply(turn, event.payload());
                return rejected == null ? null : new Rejection(rejected, turn.turnId);
            }
        }
    }

    /** Forgets what is kept in memory only; the processor calls it when its task closes. */
    void close() {
        buffer.forgetCache();
    }

    /** Applies an event to an open turn; returns why it was rejected, or null. */
    private String apply(TurnState turn, StreamPayload payload) {
        if (payload instanceof ItemStart start) {
            return startItem(turn, start);
        } else if (payload instanceof ItemDelta delta) {
            return appendDelta(turn, delta);
        } else if (payload instanceof ItemDone done) {
            return completeItem(turn, done);
        } else if (payload instanceof ItemError error) {
            return failItem(turn, error);
        } else if (payload instanceof ItemCancelled cancelled) {
            return cancelItem(turn, cancelled);
        } else if (payload instanceof ItemWithdrawn withdrawn) {
            return withdrawItem(turn, withdrawn);
        } else if (payload instanceof ResponseDone done) {
            return closeTurn(turn, StatusUpserts.turnCompleted(turn, done));
        } else if (payload instanceof ResponseError error) {
            return closeTurn(turn, StatusUpserts.turnError(turn, error));
        } else if (StatusUpserts.isStatus(payload)) {
            emitter.emit(turn, StatusUpserts.status(turn, payload));
            turns.put(turn.runId, turn);
            return null;
        }
        throw new IllegalStateException("unhandled payload " + payload.type());
    }

    private void startTurn(String runId, ResponseStart start, StreamEvent event, Headers headers) {
        TurnState turn = new TurnState();
        TurnTrace.remember(turn, event, headers);
        turn.runId = runId;
        turn.turnId = start.turnId();
        turn.threadId = start.threadId();
        turn.modelId = start.modelId();
        turn.providerId = start.providerId();
        turn.tenantId = start.tenantId();
        turn.tenantClaim = TenantClaims.claimIn(headers);
        turn.idleDueMs = now() + config.idleTimeoutMs();
        deadlines.schedule(turn.idleDueMs, Kind.IDLE, runId);
        turn.lastEventMs = now();
        turn.openItems = 0;
        emitter.emit(turn, new UITurnEvent(UiPayloadType.TURN_STARTED, turn.turnId, turn.threadId, turn.modelId,
                turn.providerId, null, null, null, turn.tenantId));
        turns.put(runId, turn);
    }

    private String startItem(TurnState turn, ItemStart start) {
        String key = itemKey(turn.runId, start.itemId());
        if (items.get(key) != null) {
            return "duplicate item_start for item " + start.itemId();
        }
        if (turn.finishedItems.contains(start.itemId())) {
            return "item_start for item " + start.itemId() + " which already finished";
        }
        ItemType itemType = start.knownItemType();
        if (itemType == null) {
            return "item_start with unknown item_type '" + start.itemType() + "' for item " + start.itemId();
        }
        ItemState item = new ItemState();
        item.itemId = start.itemId();
        item.itemType = itemType;
        item.handle = offset;
        item.held = itemType == ItemType.MESSAGE
                && (start.itemId().endsWith(USER_PROMPT_SUFFIX) || Origins.USER.equals(start.origin()));
        item.origin = start.origin() != null ? start.origin() : item.held ? Origins.USER : Origins.AGENT;
        item.toolName = start.name();
        item.callId = start.callId();
        String initial = itemType == ItemType.FUNCTION_CALL ? Json.asText(start.arguments()) : start.initialContent();
        if (initial != null && !initial.isEmpty()) {
            buffer.append(item.handle, initial);
            appends.textAdded(key, item);
        }
        if (item.emitsWhileStreaming() && buffer.codePoints(item.handle) > 0) {
            emitStreaming(turn, item, ChangeType.CREATED);
            turns.put(turn.runId, turn);
        }
        items.put(key, item);
        turn.itemOpened();
        return null;
    }

    private String appendDelta(TurnState turn, ItemDelta delta) {
        String key = itemKey(turn.runId, delta.itemId());
        ItemState item = items.get(key);
        if (item == null) {
            return unknownItem(turn, delta.itemId(), "item_delta");
        }
        if (delta.deltaContent() == null || delta.deltaContent().isEmpty()) {
            return null;
        }
        long codePoints = buffer.append(item.handle, delta.deltaContent());
        item.lastDeltaMs = now();
        appends.textAdded(key, item);
        if (!item.emitsWhileStreaming()) {
            return null;
        }
        long tokens = GradientBatcher.estimateTokens(codePoints);
        if (!item.createdEmitted()) {
            emitStreaming(turn, item, ChangeType.CREATED);
        } else if (batcher.reached(tokens, GradientBatcher.estimateTokens(item.emittedCodePoints), item.thresholdIndex)) {
            emitStreaming(turn, item, ChangeType.UPDATED);
        } else if (item.timerDueMs == 0) {
            item.timerDueMs = now() + config.batchTimeoutMs();
            deadlines.schedule(item.timerDueMs, Kind.BATCH, key);
            // only an emit changes the turn (its seq): arming a timer writes the item alone
            items.put(key, item);
            return null;
        } else {
            return null;
        }
        items.put(key, item);
        turns.put(turn.runId, turn);
        return null;
    }

    private String completeItem(TurnState turn, ItemDone done) {
        String key = itemKey(turn.runId, done.itemId());
        ItemState item = items.get(key);
        if (item == null) {
            return unknownItem(turn, done.itemId(), "item_done");
        }
        OutputItem finalItem = done.finalItem();
        switch (item.itemType) {
            case FUNCTION_CALL -> completeToolCall(turn, item, finalItem);
            case FUNCTION_CALL_OUTPUT -> completeToolOutput(turn, item, finalItem);
            default -> {
                // The final item's content wins; the buffer is read only when it has none.
                String content = finalItem != null && finalItem.content() != null
                        ? finalItem.content() : buffer.content(item.handle);
                if (finalItem != null && finalItem.origin() != null) {
                    item.origin = finalItem.origin();
                }
                emitter.emit(turn, itemUpsert(turn, item, ChangeType.COMPLETED, content));
                appends.sendRest(key, turn, item, content);
            }
        }
        finishItem(turn, item);
        turns.put(turn.runId, turn);
        return null;
    }

    private void completeToolCall(TurnState turn, ItemState item, OutputItem finalItem) {
        String arguments = finalItem != null && finalItem.arguments() != null
                ? Json.asText(finalItem.arguments()) : buffer.content(item.handle);
        if (finalItem != null) {
            item.toolName = firstNonNull(finalItem.name(), item.toolName);
            item.callId = firstNonNull(finalItem.callId(), item.callId);
        }
        String callId = firstNonNull(item.callId, item.itemId);
        UIUpsert upsert = toolCallUpsert(turn, item, ChangeType.COMPLETED, arguments, callId);
        emitter.emit(turn, upsert);
        appends.sendRest(itemKey(turn.runId, item.itemId), turn, item, arguments);
        emitter.publish(turn, new ToolCall(callId, turn.turnId, turn.threadId, turn.runId, item.itemId, item.toolName,
                upsert.toolArguments(), now(), turn.tenantId));
    }

    private void completeToolOutput(TurnState turn, ItemState item, OutputItem finalItem) {
        String output = finalItem != null && finalItem.output() != null
                ? Json.asText(finalItem.output()) : buffer.content(item.handle);
        String callId = firstNonNull(finalItem != null ? finalItem.callId() : null, item.callId);
        Boolean success = finalItem != null ? finalItem.success() : null;
        emitter.emit(turn, UIUpsert.toolOutput(turn.turnId, turn.threadId, item.itemId, ++item.version, output, callId,
                success));
    }

    private String failItem(TurnState turn, ItemError error) {
        ItemState item = items.get(itemKey(turn.runId, error.itemId()));
        if (item == null) {
            return unknownItem(turn, error.itemId(), "item_error");
        }
        ErrorInfo info = error.error() != null ? error.error() : ErrorInfo.of("ITEM_ERROR", "item failed");
        emitter.emit(turn, UIUpsert.error(turn.turnId, turn.threadId, item.itemId, ++item.version, info.code(),
                info.message()));
        finishItem(turn, item);
        turns.put(turn.runId, turn);
        return null;
    }

    private String cancelItem(TurnState turn, ItemCancelled cancelled) {
        ItemState item = items.get(itemKey(turn.runId, cancelled.itemId()));
        if (item == null) {
            return unknownItem(turn, cancelled.itemId(), "item_cancelled");
        }
        finishItem(turn, item);
        turns.put(turn.runId, turn);
        return null;
    }

    /**
     * Takes back an item of a failed model call, open or finished: a {@code withdrawn} upsert on
     * {@code llm.upserts}, tombstones for its {@code llm.item-state} keys (its own and its tool
     * status'), and an open function call is never published to {@code llm.tool-calls}.
     */
    private String withdrawItem(TurnState turn, ItemWithdrawn withdrawn) {
        ItemState open = items.get(itemKey(turn.runId, withdrawn.itemId()));
        if (open != null) {
            finishItem(turn, open);
        }
        TurnState.FinishedItem item = turn.withdrawable.remove(withdrawn.itemId());
        if (item == null) {
            return turn.finishedItems.contains(withdrawn.itemId())
                    ? "item_withdrawn for item " + withdrawn.itemId() + " which was already withdrawn"
                    : "item_withdrawn for unknown item " + withdrawn.itemId();
        }
        emitter.withdraw(turn, UIUpsert.withdrawn(turn.turnId, turn.threadId, withdrawn.itemId(), item.itemType,
                item.version + 1, item.callId));
        turns.put(turn.runId, turn);
        return null;
    }

    /**
     * Flushes the turn's open items in the order they started, emits the closing turn event and
     * deletes the turn's state, leaving a marker until the closed-turn retention ends.
     */
    private String closeTurn(TurnState turn, UITurnEvent closing) {
        for (ItemState item : openItems(turn)) {
            if (!(item.mode() == ItemState.Mode.HELD && buffer.codePoints(item.handle) == 0)) {
                String content = buffer.content(item.handle);
                // Flushed at close, a call may be truncated: it is shown, never executed.
                emitter.emit(turn, item.itemType == ItemType.FUNCTION_CALL
                        ? toolCallUpsert(turn, item, ChangeType.COMPLETED, content, firstNonNull(item.callId, item.itemId))
                        : itemUpsert(turn, item, ChangeType.COMPLETED, content));
                appends.sendRest(itemKey(turn.runId, item.itemId), turn, item, content);
            }
            finishItem(turn, item);
        }
        emitter.emit(turn, closing);
        deadlines.cancel(turn.idleDueMs, Kind.IDLE, turn.runId);
        TurnState marker = new TurnState();
        marker.runId = turn.runId;
        marker.turnId = turn.turnId;
        marker.closed = true;
        marker.forgetAtMs = now() + config.closedTurnRetentionMs();
        deadlines.schedule(marker.forgetAtMs, Kind.FORGET, turn.runId);
        deadlines.schedule(now() + config.itemStateRetentionMs(), Kind.TOMBSTONE,
                UpsertEmitter.itemStateKeys(turn));
        turns.put(turn.runId, marker);
        return null;
    }

    private void finishItem(TurnState turn, ItemState item) {
        String key = itemKey(turn.runId, item.itemId);
        buffer.drop(item.handle);
        if (item.timerDueMs != 0) {
            deadlines.cancel(item.timerDueMs, Kind.BATCH, key);
        }
        appends.disarm(key);
        items.delete(key);
        turn.itemFinished();
        turn.finishedItems.add(item.itemId);
        turn.withdrawable.put(item.itemId, new TurnState.FinishedItem(item.itemType.uiType(), item.version, item.callId));
    }

    private void emitStreaming(TurnState turn, ItemState item, ChangeType changeType) {
        String content = buffer.content(item.handle);
        emitter.emit(turn, itemUpsert(turn, item, changeType, content));
        item.emittedCodePoints = buffer.codePoints(item.handle);
        item.thresholdIndex = batcher.indexPast(GradientBatcher.estimateTokens(item.emittedCodePoints), item.thresholdIndex);
    }

    private UIUpsert itemUpsert(TurnState turn, ItemState item, ChangeType changeType, String content) {
        boolean message = item.itemType == ItemType.MESSAGE;
        String providerId = item.itemType == ItemType.REASONING ? turn.providerId : null;
        return UIUpsert.text(turn.turnId, turn.threadId, item.itemId, item.itemType.uiType(), changeType, ++item.version,
                content, message ? item.origin : null, providerId);
    }

    private UIUpsert toolCallUpsert(TurnState turn, ItemState item, ChangeType changeType, String arguments, String callId) {
        return UIUpsert.toolCall(turn.turnId, turn.threadId, item.itemId, changeType, ++item.version, item.toolName,
                arguments, callId);
    }

    /** A punctuation tick: handles the deadlines due by {@code nowMs}, then sends the armed appends. */
    void onTick(long nowMs) {
        for (Deadline deadline : deadlines.takeDue(nowMs, MAX_DEADLINES_PER_TICK)) {
            switch (deadline.kind()) {
                case BATCH -> onBatchTimeout(deadline, nowMs);
                case IDLE -> onIdleTimeout(deadline, nowMs);
                case FORGET -> onForget(deadline);
                // left by an earlier version; the open items' appends are armed below
                case APPEND -> { }
                case TOMBSTONE -> emitter.tombstones(deadline.target());
            }
        }
        if (!openItemsArmed) {
            // Armed appends are not stored: after a start or restore, any open item may have unsent text.
            items.forEach(appends::textAdded);
            openItemsArmed = true;
        }
        for (String itemKey : appends.takeArmed()) {
            sendAppend(itemKey);
        }
    }

    private void onBatchTimeout(Deadline deadline, long nowMs) {
        ItemState item = items.get(deadline.target());
        if (item == null || item.timerDueMs != deadline.dueMs()) {
            return;
        }
        TurnState turn = turns.get(runIdOf(deadline.target()));
        if (item.lastDeltaMs + config.batchTimeoutMs() > nowMs) {
            item.timerDueMs = item.lastDeltaMs + config.batchTimeoutMs();
            deadlines.schedule(item.timerDueMs, Kind.BATCH, deadline.target());
        } else {
            item.timerDueMs = 0;
            if (buffer.codePoints(item.handle) > item.emittedCodePoints) {
                emitStreaming(turn, item, item.createdEmitted() ? ChangeType.UPDATED : ChangeType.CREATED);
                turns.put(turn.runId, turn);
            }
        }
        items.put(deadline.target(), item);
    }

    private void sendAppend(String itemKey) {
        ItemState item = items.get(itemKey);
        if (item != null) {
            appends.taken(item);
        }
        TurnState turn = item == null ? null : turns.get(runIdOf(itemKey));
        if (turn == null || turn.closed) {
            return;
        }
        if (appends.sendPending(turn, item)) {
            items.put(itemKey, item);
            turns.put(turn.runId, turn);
        }
    }

    private void onIdleTimeout(Deadline deadline, long nowMs) {
        TurnState turn = turns.get(deadline.target());
        if (turn == null || turn.closed || turn.idleDueMs != deadline.dueMs()) {
            return;
        }
        // Activity is not persisted: after a restart the turn gets a full idle period again.
        long lastEvent = turn.lastEventMs != 0 ? turn.lastEventMs : nowMs;
        if (lastEvent + config.idleTimeoutMs() > nowMs) {
            turn.idleDueMs = lastEvent + config.idleTimeoutMs();
            deadlines.schedule(turn.idleDueMs, Kind.IDLE, turn.runId);
            turns.put(turn.runId, turn);
            return;
        }
        closeTurn(turn, StatusUpserts.turnTimedOut(turn, config.idleTimeoutMs()));
    }

    private void onForget(Deadline deadline) {
        TurnState marker = turns.get(deadline.target());
        if (marker != null && marker.closed && marker.forgetAtMs == deadline.dueMs()) {
            turns.delete(deadline.target());
        }
    }

    private List<ItemState> openItems(TurnState turn) {
        if (turn.hasNoOpenItems()) {
            return List.of();
        }
        List<ItemState> open = items.withKeyPrefix(turn.runId + KEY_SEPARATOR);
        open.sort(Comparator.comparingLong(item -> item.handle));
        return open;
    }

    private static String unknownItem(TurnState turn, String itemId, String eventType) {
        return turn.finishedItems.contains(itemId)
                ? eventType + " for item " + itemId + " which already finished"
                : eventType + " for unknown item " + itemId;
    }

    /** Why an event cannot be processed at all, or null when it is well-formed. */
    private static String invalidReason(String key, StreamEvent event) {
        if (event == null || event.payload() == null) {
            return "StreamEvent without payload";
        }
        if (event.type() != null && !event.type().equals(event.payload().type())) {
            return "type '" + event.type() + "' differs from payload.type '" + event.payload().type() + "'";
        }
        String runId = event.runId() != null ? event.runId() : key;
        if (runId == null || runId.isEmpty()) {
            return "StreamEvent without run id (neither record key nor run_id)";
        }
        if (key != null && event.runId() != null && !key.equals(event.runId())) {
            return "record key '" + key + "' differs from run_id '" + event.runId() + "'";
        }
        StreamPayload payload = event.payload();
        if (payload instanceof ResponseStart start) {
            return start.turnId() == null || start.threadId() == null ? "response_start without turn_id or thread_id" : null;
        }
        String itemId = itemIdOf(payload);
        boolean itemEvent = !(payload instanceof ResponseDone || payload instanceof ResponseError
                || StatusUpserts.isStatus(payload));
        return itemEvent && (itemId == null || itemId.isEmpty()) ? payload.type() + " without item_id" : null;
    }

    private static String itemIdOf(StreamPayload payload) {
        if (payload instanceof ItemStart start) {
            return start.itemId();
        } else if (payload instanceof ItemDelta delta) {
            return delta.itemId();
        } else if (payload instanceof ItemDone done) {
            return done.itemId();
        } else if (payload instanceof ItemError error) {
            return error.itemId();
        } else if (payload instanceof ItemCancelled cancelled) {
            return cancelled.itemId();
        } else if (payload instanceof ItemWithdrawn withdrawn) {
            return withdrawn.itemId();
        }
        return null;
    }

    private long now() {
        return clock.getAsLong();
    }

    static String itemKey(String runId, String itemId) {
        return runId + KEY_SEPARATOR + itemId;
    }

    private static String runIdOf(String itemKey) {
        return itemKey.substring(0, itemKey.indexOf(KEY_SEPARATOR));
    }

    private static String firstNonNull(String first, String second) {
        return first != null ? first : second;
    }
}
