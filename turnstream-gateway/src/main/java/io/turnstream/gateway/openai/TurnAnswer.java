package io.turnstream.gateway.openai;

import io.turnstream.gateway.provider.FinishReasons;
import io.turnstream.gateway.view.TurnSnapshot;
import io.turnstream.model.ChangeType;
import io.turnstream.model.Origins;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StepItemIds;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiItemType;
import io.turnstream.model.UiPayloadType;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What an OpenAI-compatible caller gets of a turn: the assistant's messages (not the user's prompt, a
 * compaction summary, reasoning, or the executor's tool calls and outputs, which ran inside the turn)
 * and the calls of the caller's own tools, which the turn stopped at. Shared by the whole answers and
 * the streams of both APIs.
 *
 * @param messages the assistant's message items, in the order the turn said them
 * @param clientCalls calls of client-side tools, unanswered, in the order made
 */
record TurnAnswer(String turnId, List<UIUpsert> messages, List<UIUpsert> clientCalls, UITurnEvent end) {

    /** By the ids of the gateway's step items, {@code {runId}-s{step}-{n}}: the order things were said. */
    static final Comparator<UIUpsert> SAID_ORDER = Comparator
            .comparingLong((UIUpsert item) -> position(item.itemId())[0])
            .thenComparingLong(item -> position(item.itemId())[1]);

    /** The answer of an ended turn. */
    static TurnAnswer of(TurnSnapshot snapshot, Set<String> clientTools) {
        Set<String> answered = new HashSet<>();
        snapshot.items().stream().filter(item -> item.itemType() == UiItemType.TOOL_OUTPUT && item.callId() != null)
                .forEach(item -> answered.add(item.callId()));
        List<UIUpsert> messages = new ArrayList<>();
        List<UIUpsert> calls = new ArrayList<>();
        for (UIUpsert item : snapshot.items()) {
            if (isAnswerText(item)) {
                messages.add(item);
            } else if (isClientCall(item, clientTools) && !answered.contains(item.callId())) {
                calls.add(item);
            }
        }
        messages.sort(SAID_ORDER);
        calls.sort(SAID_ORDER);
        return new TurnAnswer(snapshot.turnId(), messages, calls, snapshot.turn());
    }

    /** An item the assistant said to the caller (not withdrawn). */
    static boolean isAnswerText(UIUpsert item) {
        return item.itemType() == UiItemType.MESSAGE && item.changeType() != ChangeType.WITHDRAWN
                && !Origins.USER.equals(item.origin()) && !Origins.COMPACTION.equals(item.origin());
    }

    static boolean isClientCall(UIUpsert item, Set<String> clientTools) {
        return item.itemType() == UiItemType.TOOL_CALL && item.changeType() != ChangeType.WITHDRAWN
                && item.callId() != null && clientTools.contains(item.toolName());
    }

    /** A call's arguments as the JSON text the model wrote. */
    static String arguments(UIUpsert call) {
        if (call.content() != null && !call.content().isBlank()) {
            return call.content();
        }
        return call.toolArguments() != null ? call.toolArguments().toString() : "{}";
    }

    /** The messages' texts joined by blank lines: what a Chat Completions caller reads as the content. */
    String text() {
        List<String> texts = messages.stream().map(UIUpsert::content).filter(t -> t != null && !t.isEmpty()).toList();
        return String.join("\n\n", texts);
    }

    boolean failed() {
        return end == null || end.type() == UiPayloadType.TURN_ERROR || end.status() == ResponseStatus.ERROR;
    }

    boolean cancelled() {
        return end != null && end.status() == ResponseStatus.ABORTED;
    }

    /** Why the turn failed or was cancelled, for an error answer. */
    String problem() {
        if (cancelled()) {
            return "the turn was cancelled";
        }
        return end == null || end.error() == null ? "the turn failed"
                : "the turn failed: " + end.error().code() + ": " + end.error().message();
    }

    /** Chat Completions' {@code finish_reason} of an ended turn. */
    static String chatFinishReason(UITurnEvent end, boolean returnedCalls) {
        if (returnedCalls) {
            return "tool_calls";
        }
        String reason = end == null ? null : end.finishReason();
        if (reason == null) {
            return "stop";
        }
        return switch (reason) {
            case FinishReasons.LENGTH, FinishReasons.MAX_STEPS -> "length";
            case FinishReasons.CONTENT_FILTER, FinishReasons.REFUSAL -> "content_filter";
            default -> "stop";
        };
    }

    private static long[] position(String itemId) {
        return StepItemIds.parse(itemId).filter(id -> id.kind() == StepItemIds.Kind.ITEM)
                .map(id -> new long[] {id.step(), id.index()}).orElse(new long[] {0, 0});
    }
}
