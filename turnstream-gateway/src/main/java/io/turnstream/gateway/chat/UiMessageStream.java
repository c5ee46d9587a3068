package io.turnstream.gateway.chat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.gateway.http.EventStream;
import io.turnstream.gateway.provider.ErrorCodes;
import io.turnstream.gateway.provider.FinishReasons;
import io.turnstream.gateway.view.LiveEncoder;
import io.turnstream.gateway.view.LiveEvent;
import io.turnstream.gateway.view.StreamPosition;
import io.turnstream.model.ChangeType;
import io.turnstream.model.ItemAppend;
import io.turnstream.model.Json;
import io.turnstream.model.Origins;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StepItemIds;
import io.turnstream.model.ToolState;
import io.turnstream.model.UIStatus;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiPayloadType;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * One turn as the Vercel AI SDK's UI message stream (protocol v1): one assistant message whose id
 * is the turn id. Each model call is a step ({@code start-step} ... {@code finish-step}); reasoning
 * and text parts open with their item's first upsert and grow by the append rule ({@link ItemText}),
 * so deltas come from {@code llm.item-appends} with upserts filling any gap. A tool call's input
 * streams: {@code tool-input-start} with its {@code pending} status (sent as the call starts
 * streaming), {@code tool-input-delta} from its arguments' appends, {@code tool-input-available}
 * with its completed upsert; outputs come from their upserts. Statuses are data parts that replace
 * their predecessor (same type and id): {@code data-tool-status} (id: the call id) and
 * {@code data-turn-status} (id: {@code status}), each holding the {@code UIStatus}; a call held for
 * a person's approval adds {@code data-approval} (id: the call id) {@code {turnId, callId, toolName,
 * state}}, {@code state} {@code requested}, then {@code approved}, {@code denied} or
 * {@code cancelled}. A compaction's summary (a message of origin {@code compaction}) is a
 * {@code data-compaction} part, not text the assistant said. An item of a model call that failed and
 * was made again ends its part and is named in a {@code data-withdrawn} part
 * ({@code {"itemIds": [...], "callIds": [...]}}, {@code callIds} for a tool call): a client removes those parts. The turn's terminal event closes the
 * message with {@code finish} (after {@code error} for a failed turn) and {@code [DONE]}.
 */
final class UiMessageStream implements LiveEncoder {

    private final String turnId;
    /** Streaming items by id, in order of first sight. */
    private final Map<String, ItemText> texts = new LinkedHashMap<>();
    private final Map<String, String> partTypes = new HashMap<>();
    /** Tool calls whose input started, by item id. */
    private final Map<String, ToolInput> toolInputs = new HashMap<>();
    private final Set<String> toolInputsSent = new HashSet<>();
    /** Calls that were held for approval, whose decision is not sent yet. */
    private final Set<String> awaitingApproval = new HashSet<>();
    private final Set<String> toolOutputsSent = new HashSet<>();
    private int step;
    /** The last thing of the turn was a tool call or output (no answer after it). */
    private boolean endedOnTools;

    UiMessageStream(String turnId) {
        this.turnId = turnId;
    }

    @Override
    public void open(EventStream client) {
        ObjectNode start = chunk("start").put("messageId", turnId);
        start.putObject("messageMetadata").put("turnId", turnId);
        send(client, start);
    }

    @Override
    public void write(LiveEvent event, StreamPosition position, EventStream client) {
        if (event instanceof LiveEvent.Append append) {
            append(append.append(), client);
        } else if (event instanceof LiveEvent.Upsert upsert) {
            if (upsert.envelope().payload() instanceof UIUpsert item) {
                item(item, client);
            } else if (upsert.envelope().payload() instanceof UIStatus status) {
                status(status, client);
            } else if (upsert.envelope().payload() instanceof UITurnEvent turn && event.isTerminal()) {
                finish(turn, client);
            }
        }
    }

    @Override
    public void fellBehind(EventStream client, String message) {
        send(client, chunk("error").put("errorText", message));
        client.sendData("[DONE]");
    }

    @Override
    public void close(EventStream client) {
        client.sendData("[DONE]");
    }

    private void append(ItemAppend append, EventStream client) {
        ToolInput input = toolInputs.get(append.itemId());
        if (input != null) {
            String added = input.text.append(append.offset(), append.text());
            if (!input.available && !added.isEmpty()) {
                inputDelta(input.callId, added, client);
            }
            return;
        }
        ItemText text = texts.computeIfAbsent(append.itemId(), id -> new ItemText());
        if (text.ended) {
            return;
        }
        String added = text.append(append.offset(), append.text());
        if (text.started && !added.isEmpty()) {
            delta(append.itemId(), added, client);
        }
    }

    private void item(UIUpsert item, EventStream client) {
        if (item.changeType() == ChangeType.WITHDRAWN) {
            withdrawn(item, client);
            return;
        }
        if (Origins.USER.equals(item.origin())) {
            return; // the user's prompt is the request's own message
        }
        if (Origins.COMPACTION.equals(item.origin())) {
            compaction(item, client);
            return;
        }
        enterStep(stepOf(item.itemId()), client);
        switch (item.itemType()) {
            case MESSAGE -> streamed(item, "text", client);
            case REASONING -> streamed(item, "reasoning", client);
            case TOOL_CALL -> toolCall(item, client);
            case TOOL_OUTPUT -> toolOutput(item, client);
            default -> end(item.itemId(), client); // an item error ends its part; the turn's error follows
        }
    }

    private void withdrawn(UIUpsert item, EventStream client) {
        String itemId = item.itemId();
        end(itemId, client);
        texts.computeIfAbsent(itemId, id -> new ItemText()).ended = true;
        ObjectNode part = chunk("data-withdrawn");
        ObjectNode data = part.putObject("data");
        data.putArray("itemIds").add(itemId);
        if (item.callId() != null) {
            data.putArray("callIds").add(item.callId());
        }
        send(client, part);
    }

    private void compaction(UIUpsert item, EventStream client) {
        if (item.changeType() == ChangeType.COMPLETED) {
            ObjectNode part = chunk("data-compaction").put("id", item.itemId());
            part.putObject("data").put("summary", item.content());
            send(client, part);
        }
    }

    private void streamed(UIUpsert item, String partType, EventStream client) {
        endedOnTools = false;
        ItemText text = texts.computeIfAbsent(item.itemId(), id -> new ItemText());
        if (text.ended) {
            return;
        }
        String added = text.upsert(item.content());
        if (!text.started) {
            text.started = true;
            partTypes.put(item.itemId(), partType);
            send(client, chunk(partType + "-start").put("id", item.itemId()));
            added = text.text();
        }
        if (!added.isEmpty()) {
            delta(item.itemId(), added, client);
        }
        if (item.changeType() == ChangeType.COMPLETED) {
            end(item.itemId(), client);
        }
    }

    private void delta(String itemId, String added, EventStream client) {
        send(client, chunk(partTypes.get(itemId) + "-delta").put("id", itemId).put("delta", added));
    }

    private void end(String itemId, EventStream client) {
        ItemText text = texts.get(itemId);
        if (text != null && text.started && !text.ended) {
            text.ended = true;
            send(client, chunk(partTypes.get(itemId) + "-end").put("id", itemId));
        }
    }

    /** A call's input starts (once): with its {@code pending} status, else with its completed upsert. */
    private ToolInput startToolInput(String itemId, String callId, String toolName, EventStream client) {
        ToolInput started = toolInputs.get(itemId);
        if (started != null) {
            return started;
        }
        enterStep(stepOf(itemId), client);
        endedOnTools = true;
        // appends that came before the call was known (the two topics are read apart)
        ItemText early = texts.remove(itemId);
        ToolInput input = new ToolInput(callId, early != null ? early : new ItemText());
        toolInputs.put(itemId, input);
        send(client, chunk("tool-input-start").put("toolCallId", callId).put("toolName", toolNameOrDefault(toolName)));
        if (!input.text.text().isEmpty()) {
            inputDelta(callId, input.text.text(), client);
        }
        return input;
    }

    private void inputDelta(String callId, String added, EventStream client) {
        send(client, chunk("tool-input-delta").put("toolCallId", callId).put("inputTextDelta", added));
    }

    private void toolCall(UIUpsert item, EventStream client) {
        endedOnTools = true;
        if (item.callId() == null || !toolInputsSent.add(item.callId())) {
            return;
        }
        ToolInput started = startToolInput(item.itemId(), item.callId(), item.toolName(), client);
        // the arguments' appends and the call's upsert come from two topics read apart: what the appends
        // have not streamed yet is sent now, so the input's deltas always add up to the whole input
        String unstreamed = started.text.upsert(item.content());
        if (!unstreamed.isEmpty()) {
            inputDelta(item.callId(), unstreamed, client);
        }
        started.available = true;
        ObjectNode input = chunk("tool-input-available").put("toolCallId", item.callId())
                .put("toolName", toolNameOrDefault(item.toolName()));
        input.set("input", item.toolArguments() != null ? item.toolArguments() : Json.MAPPER.createObjectNode());
        send(client, input);
    }

    private void toolOutput(UIUpsert item, EventStream client) {
        endedOnTools = true;
        // the AI SDK attaches an output to its call's part: one without a call would break the message
        if (item.callId() == null || !toolInputsSent.contains(item.callId()) || !toolOutputsSent.add(item.callId())) {
            return;
        }
        JsonNode output = item.toolOutput() != null ? item.toolOutput() : TextNode.valueOf(item.content());
        if (Boolean.FALSE.equals(item.success())) {
            send(client, chunk("tool-output-error").put("toolCallId", item.callId())
                    .put("errorText", output.isTextual() ? output.asText() : output.toString()));
        } else {
            ObjectNode available = chunk("tool-output-available").put("toolCallId", item.callId());
            available.set("output", output);
            send(client, available);
        }
    }

    private void status(UIStatus status, EventStream client) {
        if (status.type() != UiPayloadType.TOOL_STATUS) {
            send(client, dataPart("data-turn-status", "status", Json.MAPPER.valueToTree(status)));
            return;
        }
        if (status.callId() == null) {
            return;
        }
        String callId = status.callId();
        if (ToolState.PENDING.wire().equals(status.status()) && status.itemId() != null) {
            startToolInput(status.itemId(), callId, status.toolName(), client);
        }
        send(client, dataPart("data-tool-status", callId, Json.MAPPER.valueToTree(status)));
        String approval = approvalState(status);
        if (approval != null) {
            ObjectNode data = Json.MAPPER.createObjectNode().put("turnId", turnId).put("callId", callId)
                    .put("toolName", status.toolName()).put("state", approval);
            send(client, dataPart("data-approval", callId, data));
        }
    }

    /** The approval part's state this status brings: null when it changes nothing. */
    private String approvalState(UIStatus status) {
        String callId = status.callId();
        if (ToolState.AWAITING_APPROVAL.wire().equals(status.status())) {
            return awaitingApproval.add(callId) ? "requested" : null;
        }
        if (!awaitingApproval.remove(callId)) {
            return null;
        }
        if (ToolState.ABORTED.wire().equals(status.status())) {
            return "cancelled";
        }
        boolean denied = ToolState.ERROR.wire().equals(status.status()) && status.error() != null
                && ErrorCodes.TOOL_CALL_DENIED.equals(status.error().code());
        return denied ? "denied" : "approved";
    }

    /** Moves to the item's step: what is open ends, the previous step finishes, the next starts. */
    private void enterStep(int itemStep, EventStream client) {
        int next = Math.max(itemStep, Math.max(step, 1));
        if (next == step) {
            return;
        }
        finishStep(client);
        step = next;
        send(client, chunk("start-step"));
    }

    private void finishStep(EventStream client) {
        texts.keySet().forEach(itemId -> end(itemId, client));
        if (step > 0) {
            send(client, chunk("finish-step"));
        }
    }

    private void finish(UITurnEvent turn, EventStream client) {
        finishStep(client);
        String reason;
        if (turn.type() == UiPayloadType.TURN_ERROR) {
            String message = turn.error() == null ? "the turn failed"
                    : turn.error().code() + ": " + turn.error().message();
            send(client, chunk("error").put("errorText", message));
            reason = "error";
        } else if (turn.status() == ResponseStatus.ERROR) {
            reason = "error";
        } else if (turn.status() == ResponseStatus.ABORTED) {
            reason = "other";
        } else {
            reason = finishReason(turn.finishReason());
        }
        ObjectNode finish = chunk("finish").put("finishReason", reason);
        ObjectNode metadata = finish.putObject("messageMetadata").put("turnId", turnId);
        if (turn.status() != null) {
            metadata.put("status", turn.status().wire());
        }
        if (turn.usage() != null) {
            metadata.set("usage", Json.MAPPER.valueToTree(turn.usage()));
        }
        if (turn.failedAttemptsUsage() != null) {
            metadata.set("failedAttemptsUsage", Json.MAPPER.valueToTree(turn.failedAttemptsUsage()));
        }
        send(client, finish);
    }

    /** The AI SDK's name for the turn's finish reason; without one, whether it ended on tool calls. */
    private String finishReason(String turnReason) {
        if (turnReason == null) {
            return endedOnTools ? "tool-calls" : "stop";
        }
        return switch (turnReason) {
            case FinishReasons.STOP -> "stop";
            case FinishReasons.LENGTH -> "length";
            case FinishReasons.CONTENT_FILTER, FinishReasons.REFUSAL -> "content-filter";
            // the step limit stops a turn whose model still wanted its tools' results
            case FinishReasons.TOOL_CALLS, FinishReasons.MAX_STEPS -> "tool-calls";
            default -> "other";
        };
    }

    private static int stepOf(String itemId) {
        // the step's items and its calls' outputs; 0 (no new step) for any other id
        return StepItemIds.parse(itemId)
                .filter(id -> id.kind() == StepItemIds.Kind.ITEM || id.kind() == StepItemIds.Kind.OUTPUT)
                .map(StepItemIds.Parsed::step).orElse(0);
    }

    private static String toolNameOrDefault(String toolName) {
        return toolName != null ? toolName : "tool";
    }

    /** A data part; a later one of the same type and id replaces it in the client's message. */
    private static ObjectNode dataPart(String type, String id, JsonNode data) {
        ObjectNode part = chunk(type).put("id", id);
        part.set("data", data);
        return part;
    }

    private static ObjectNode chunk(String type) {
        return Json.MAPPER.createObjectNode().put("type", type);
    }

    private static void send(EventStream client, ObjectNode chunk) {
        client.sendData(chunk.toString());
    }

    /** A tool call's input as streamed so far, and whether its whole input was sent. */
    private static final class ToolInput {
        final String callId;
        final ItemText text;
        boolean available;

        ToolInput(String callId, ItemText text) {
            this.callId = callId;
            this.text = text;
        }
    }
}
