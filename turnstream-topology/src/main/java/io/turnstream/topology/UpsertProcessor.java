package io.turnstream.topology;

import io.turnstream.model.ErrorInfo;
import io.turnstream.model.ItemTypes;
import io.turnstream.model.Json;
import io.turnstream.model.OutputItem;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.StreamPayload.ItemCancelled;
import io.turnstream.model.StreamPayload.ItemDelta;
import io.turnstream.model.StreamPayload.ItemDone;
import io.turnstream.model.StreamPayload.ItemError;
import io.turnstream.model.StreamPayload.ItemStart;
import io.turnstream.model.StreamPayload.ResponseDone;
import io.turnstream.model.StreamPayload.ResponseError;
import io.turnstream.model.StreamPayload.ResponseStart;
import io.turnstream.model.ToolCall;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UITurnEvent;
import io.turnstream.topology.DeadlineQueue.Deadline;
import io.turnstream.topology.DeadlineQueue.Kind;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.slf4j.MDC;

/**
 * Turns the raw StreamEvents of each run into upserts: buffers item content, emits on the batch
 * gradient, holds user messages, closes turns, and routes completed function calls. One wall-clock
 * punctuator drives the batch timeouts, the idle-turn watchdog and the forgetting of closed turns.
 *
 * <p>State per turn is keyed by run id (the input key); a delta writes nothing but its text, into its
 * item's open chunk, which the record cache writes once per commit (see {@link ItemBuffer}).
 */
final class UpsertProcessor implements Processor<String, byte[], String, byte[]> {

    /** Bounds the work of one punctuation; the rest is picked up by the next tick. */
    private static final int MAX_DEADLINES_PER_TICK = 10_000;
    /** Turns and items kept deserialised per task (open ones and closed-turn markers are small). */
    private static final int MAX_CACHED_STATES = 50_000;
    private static final String USER_PROMPT_SUFFIX = "-user-prompt";
    private static final String KEY_SEPARATOR = "\u0000";

    private final TopologyConfig config;
    private final GradientBatcher batcher;

    private ProcessorContext<String, byte[]> context;
    private StateCache<TurnState> turns;
    private StateCache<ItemState> items;
    private ItemBuffer buffer;
    private DeadlineQueue deadlines;
    private UpsertEmitter emitter;
    private ItemAppends appends;
    private DeadLetters deadLetters;
    private Sensor deadLetterCounter;
    /**
     * Wall-clock time of the last event per turn and of the last delta per item. Kept in memory
     * only, so deltas never write to the changelog: deadlines are armed once and, when they fall due,
     * pushed back to "last activity + timeout" if there was activity since.
     */
    private final Map<String, Long> lastActivity = new HashMap<>();
    /** Whether the first tick since init armed the appends of every open item (see {@link ItemAppends}). */
    private boolean openItemsArmed;

    UpsertProcessor(TopologyConfig config) {
        this.config = config;
        this.batcher = new GradientBatcher(config.gradient(), config.minGrowthFraction());
    }

    @Override
    public void init(ProcessorContext<String, byte[]> context) {
        this.context = context;
        this.turns = new StateCache<>(context.getStateStore(UpsertTopology.TURNS_STORE), MAX_CACHED_STATES);
        this.items = new StateCache<>(context.getStateStore(UpsertTopology.ITEMS_STORE), MAX_CACHED_STATES);
        KeyValueStore<Bytes, byte[]> chunks = context.getStateStore(UpsertTopology.CHUNKS_STORE);
        this.buffer = new ItemBuffer(chunks);
        this.deadlines = new DeadlineQueue(context.getStateStore(UpsertTopology.DEADLINES_STORE));
        this.emitter = new UpsertEmitter(context, config);
        this.appends = new ItemAppends(context, config, buffer);
        this.openItemsArmed = false;
        deadLetterCounter = context.metrics().addRateTotalSensor(
                "turnstream", context.taskId().toString(), "dead-letter", Sensor.RecordingLevel.INFO);
        this.deadLetters = new DeadLetters(context, deadLetterCounter);
        lastActivity.clear();
        context.schedule(Duration.ofMillis(config.punctuateIntervalMs()), PunctuationType.WALL_CLOCK_TIME, this::onWallClock);
    }

    @Override
    public void process(Record<String, byte[]> record) {
        StreamEvent event;
        try {
            event = config.wireFormat().read(config.topics().rawEvents(), record.value(), StreamEvent.class);
        } catch (IOException | RuntimeException e) {
            deadLetters.send(record, "unparseable StreamEvent: " + firstLine(e.getMessage()));
            return;
        }
        String problem = invalidReason(record.key(), event);
        if (problem != null) {
            deadLetters.send(record, problem);
            return;
        }
        String runId = event.runId() != null ? event.runId() : record.key();
        TurnState turn = turns.get(runId);
        if (event.payload() instanceof ResponseStart start) {
            if (turn != null) {
                deadLetters.send(record, turn.closed ? "response_start for a turn that already closed" : "duplicate response_start");
                return;
            }
            startTurn(runId, start, event, record);
            return;
        }
        if (turn == null) {
            deadLetters.send(record, event.type() + " before response_start: no open turn for run " + runId);
            return;
        }
        if (turn.closed) {
            deadLetters.send(record, event.type() + " after the turn closed");
            return;
        }
        lastActivity.put(runId, now());
        String rejected = apply(turn, event.payload());
        if (rejected != null) {
            // The MDC only where the topology logs: set per record, it was a visible cost of every delta.
            MDC.put("turnId", turn.turnId);
            try {
                deadLetters.send(record, rejected);
            } finally {
                MDC.remove("turnId");
            }
        }
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
        } else if (payload instanceof ResponseDone done) {
            return closeTurn(turn, StatusUpserts.turnCompleted(turn, done));
        } else if (payload instanceof ResponseError error) {
            ErrorInfo info = error.error() != null ? error.error() : ErrorInfo.of("RESPONSE_ERROR", "response failed");
            return closeTurn(turn, turnEvent(UITurnEvent.TURN_ERROR, turn, null, null, info));
        } else if (StatusUpserts.isStatus(payload)) {
            emitter.emit(turn, StatusUpserts.status(turn, payload));
            turns.put(turn.runId, turn);
            return null;
        }
        throw new IllegalStateException("unhandled payload " + payload.type());
    }

    private void startTurn(String runId, ResponseStart start, StreamEvent event, Record<String, byte[]> record) {
        TurnState turn = new TurnState();
        TurnTrace.remember(turn, event, record.headers());
        turn.runId = runId;
        turn.turnId = start.turnId();
        turn.threadId = start.threadId();
        turn.modelId = start.modelId();
        turn.providerId = start.providerId();
        turn.tenantId = start.tenantId();
        turn.idleDueMs = now() + config.idleTimeoutMs();
        deadlines.schedule(turn.idleDueMs, Kind.IDLE, runId);
        lastActivity.put(runId, now());
        emitter.emit(turn, new UITurnEvent(UITurnEvent.TURN_STARTED, turn.turnId, turn.threadId, turn.modelId,
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
        if (ItemTypes.uiType(start.itemType()) == null) {
            return "item_start with unknown item_type '" + start.itemType() + "' for item " + start.itemId();
        }
        ItemState item = new ItemState();
        item.itemId = start.itemId();
        item.itemType = start.itemType();
        item.handle = context.recordMetadata().orElseThrow().offset();
        item.held = ItemTypes.MESSAGE.equals(start.itemType())
                && (start.itemId().endsWith(USER_PROMPT_SUFFIX) || ItemTypes.ORIGIN_USER.equals(start.origin()));
        item.origin = start.origin() != null ? start.origin() : item.held ? ItemTypes.ORIGIN_USER : ItemTypes.ORIGIN_AGENT;
        item.toolName = start.name();
        item.callId = start.callId();
        String initial = ItemTypes.FUNCTION_CALL.equals(start.itemType()) ? Json.asText(start.arguments()) : start.initialContent();
        if (initial != null && !initial.isEmpty()) {
            buffer.append(item.handle, initial);
            appends.textAdded(key, item);
        }
        if (item.emitsWhileStreaming() && buffer.codePoints(item.handle) > 0) {
            emitStreaming(turn, item, UIUpsert.CREATED);
            turns.put(turn.runId, turn);
        }
        items.put(key, item);
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
        buffer.append(item.handle, delta.deltaContent());
        lastActivity.put(key, now());
        if (!item.emitsWhileStreaming()) {
            return null;
        }
        appends.textAdded(key, item);
        long tokens = GradientBatcher.estimateTokens(buffer.codePoints(item.handle));
        if (!item.createdEmitted()) {
            emitStreaming(turn, item, UIUpsert.CREATED);
        } else if (batcher.reached(tokens, GradientBatcher.estimateTokens(item.emittedCodePoints), item.thresholdIndex)) {
            emitStreaming(turn, item, UIUpsert.UPDATED);
        } else if (item.timerDueMs == 0) {
            item.timerDueMs = now() + config.batchTimeoutMs();
            deadlines.schedule(item.timerDueMs, Kind.BATCH, key);
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
            case ItemTypes.FUNCTION_CALL -> completeToolCall(turn, item, finalItem);
            case ItemTypes.FUNCTION_CALL_OUTPUT -> completeToolOutput(turn, item, finalItem);
            default -> {
                // The final item's content wins; the buffer is read only when it has none.
                String content = finalItem != null && finalItem.content() != null
                        ? finalItem.content() : buffer.content(item.handle);
                if (finalItem != null && finalItem.origin() != null) {
                    item.origin = finalItem.origin();
                }
                emitter.emit(turn, itemUpsert(turn, item, UIUpsert.COMPLETED, content));
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
        UIUpsert upsert = toolCallUpsert(turn, item, UIUpsert.COMPLETED, arguments, callId);
        emitter.emit(turn, upsert);
        emitter.publish(turn, new ToolCall(callId, turn.turnId, turn.threadId, turn.runId, item.itemId, item.toolName,
                upsert.toolArguments(), now(), turn.tenantId));
    }

    private void completeToolOutput(TurnState turn, ItemState item, OutputItem finalItem) {
        String output = finalItem != null && finalItem.output() != null
                ? Json.asText(finalItem.output()) : buffer.content(item.handle);
        String callId = firstNonNull(finalItem != null ? finalItem.callId() : null, item.callId);
        Boolean success = finalItem != null ? finalItem.success() : null;
        emitter.emit(turn, new UIUpsert(UIUpsert.TYPE, turn.turnId, turn.threadId, item.itemId, ItemTypes.UI_TOOL_OUTPUT,
                UIUpsert.COMPLETED, ++item.version, output, null, null, null, null, callId, Json.parseOrText(output),
                success, null, null));
    }

    private String failItem(TurnState turn, ItemError error) {
        ItemState item = items.get(itemKey(turn.runId, error.itemId()));
        if (item == null) {
            return unknownItem(turn, error.itemId(), "item_error");
        }
        ErrorInfo info = error.error() != null ? error.error() : ErrorInfo.of("ITEM_ERROR", "item failed");
        emitter.emit(turn, new UIUpsert(UIUpsert.TYPE, turn.turnId, turn.threadId, item.itemId, ItemTypes.ERROR,
                UIUpsert.COMPLETED, ++item.version, info.message() != null ? info.message() : "", null, null, null,
                null, null, null, null, info.code(), info.message()));
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
     * Flushes the turn's open items in the order they started, emits the closing turn event and
     * deletes the turn's state, leaving a marker until the closed-turn retention ends.
     */
    private String closeTurn(TurnState turn, UITurnEvent closing) {
        for (ItemState item : openItems(turn.runId)) {
            if (!(item.held && buffer.codePoints(item.handle) == 0)) {
                String content = buffer.content(item.handle);
                // Flushed at close, a call may be truncated: it is shown, never executed.
                emitter.emit(turn, ItemTypes.FUNCTION_CALL.equals(item.itemType)
                        ? toolCallUpsert(turn, item, UIUpsert.COMPLETED, content, firstNonNull(item.callId, item.itemId))
                        : itemUpsert(turn, item, UIUpsert.COMPLETED, content));
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
        lastActivity.remove(turn.runId);
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
        lastActivity.remove(key);
        turn.finishedItems.add(item.itemId);
    }

    private void emitStreaming(TurnState turn, ItemState item, String changeType) {
        String content = buffer.content(item.handle);
        emitter.emit(turn, itemUpsert(turn, item, changeType, content));
        item.emittedCodePoints = buffer.codePoints(item.handle);
        item.thresholdIndex = batcher.indexPast(GradientBatcher.estimateTokens(item.emittedCodePoints), item.thresholdIndex);
    }

    private UIUpsert itemUpsert(TurnState turn, ItemState item, String changeType, String content) {
        boolean message = ItemTypes.MESSAGE.equals(item.itemType);
        String providerId = ItemTypes.REASONING.equals(item.itemType) ? turn.providerId : null;
        return new UIUpsert(UIUpsert.TYPE, turn.turnId, turn.threadId, item.itemId, ItemTypes.uiType(item.itemType),
                changeType, ++item.version, content, message ? item.origin : null, providerId,
                null, null, null, null, null, null, null);
    }

    private UIUpsert toolCallUpsert(TurnState turn, ItemState item, String changeType, String arguments, String callId) {
        return new UIUpsert(UIUpsert.TYPE, turn.turnId, turn.threadId, item.itemId, ItemTypes.UI_TOOL_CALL, changeType,
                ++item.version, arguments, null, null, item.toolName, Json.parseOrText(arguments), callId, null, null,
                null, null);
    }

    private static UITurnEvent turnEvent(String type, TurnState turn, String status, UITurnEvent.Usage usage, ErrorInfo error) {
        return new UITurnEvent(type, turn.turnId, turn.threadId, null, null, status, usage,
                error == null ? null : ErrorInfo.of(error.code(), error.message()), turn.tenantId);
    }

    private void onWallClock(long nowMs) {
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
        Long lastDelta = lastActivity.get(deadline.target());
        if (lastDelta != null && lastDelta + config.batchTimeoutMs() > nowMs) {
            item.timerDueMs = lastDelta + config.batchTimeoutMs();
            deadlines.schedule(item.timerDueMs, Kind.BATCH, deadline.target());
        } else {
            item.timerDueMs = 0;
            if (buffer.codePoints(item.handle) > item.emittedCodePoints) {
                emitStreaming(turn, item, item.createdEmitted() ? UIUpsert.UPDATED : UIUpsert.CREATED);
                turns.put(turn.runId, turn);
            }
        }
        items.put(deadline.target(), item);
    }

    private void sendAppend(String itemKey) {
        ItemState item = items.get(itemKey);
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
        long lastEvent = lastActivity.getOrDefault(turn.runId, nowMs);
        if (lastEvent + config.idleTimeoutMs() > nowMs) {
            turn.idleDueMs = lastEvent + config.idleTimeoutMs();
            deadlines.schedule(turn.idleDueMs, Kind.IDLE, turn.runId);
            turns.put(turn.runId, turn);
            return;
        }
        closeTurn(turn, turnEvent(UITurnEvent.TURN_ERROR, turn, null, null,
                ErrorInfo.of("TURN_TIMEOUT", "no event for " + config.idleTimeoutMs() + " ms")));
    }

    private void onForget(Deadline deadline) {
        TurnState marker = turns.get(deadline.target());
        if (marker != null && marker.closed && marker.forgetAtMs == deadline.dueMs()) {
            turns.delete(deadline.target());
        }
    }

    private List<ItemState> openItems(String runId) {
        List<ItemState> open = items.withKeyPrefix(runId + KEY_SEPARATOR);
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
        }
        return null;
    }

    private long now() {
        return context.currentSystemTimeMs();
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

    private static String firstLine(String message) {
        if (message == null) {
            return "no detail";
        }
        int newline = message.indexOf('\n');
        return newline < 0 ? message : message.substring(0, newline);
    }

    @Override
    public void close() {
        if (deadLetterCounter != null) {
            // The sensor is this task's: it goes with the task, as Streams' own task metrics do.
            context.metrics().removeSensor(deadLetterCounter);
            deadLetterCounter = null;
        }
        lastActivity.clear();
        if (buffer != null) {
            buffer.forgetCache();
        }
    }
}
