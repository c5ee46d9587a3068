package io.turnstream.schema;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.model.ChangeType;
import io.turnstream.model.ControlMessage;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.ItemAppend;
import io.turnstream.model.Json;
import io.turnstream.model.OutputItem;
import io.turnstream.model.PublishedTool;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.ToolCall;
import io.turnstream.model.ToolResult;
import io.turnstream.model.ToolState;
import io.turnstream.model.TurnActivity;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.model.UIStatus;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiItemType;
import io.turnstream.model.UiPayload;
import io.turnstream.model.UiPayloadType;
import io.turnstream.model.UpsertEnvelope;
import java.util.ArrayList;
import java.util.List;

/** One instance of every record shape of the contract: every optional field set, and every optional field absent. */
final class ContractSamples {

    static final long T = 1_760_000_000_000L;

    private ContractSamples() {
    }

    static JsonNode json(String text) {
        return Json.fromString(text, JsonNode.class);
    }

    static List<StreamPayload> streamPayloads() {
        ErrorInfo error = new ErrorInfo("rate_limited", "slow down", "at Provider.call");
        return List.of(
                new StreamPayload.ResponseStart("resp-1", "turn-1", "thread-1", "agent-7", "claude-x", "anthropic", T),
                new StreamPayload.ResponseStart("resp-1", "turn-1", "thread-1", null, "gpt-x", "openai", T),
                new StreamPayload.ResponseStart("resp-1", "turn-1", "thread-1", null, "gpt-x", "openai", T, "tenant-a"),
                new StreamPayload.ItemStart("item-1", "message", "Hello", null, null, null, "agent"),
                new StreamPayload.ItemStart("call-item", "function_call", null, "get_weather",
                        json("{\"city\":\"Paris\",\"days\":[1,2]}"), "call-1", null),
                new StreamPayload.ItemStart("call-item", "function_call", null, "get_weather",
                        TextNode.valueOf("{\"city\": \"Par"), "call-1", null),
                new StreamPayload.ItemStart("item-2", "reasoning", null, null, null, null, null),
                new StreamPayload.ItemDelta("item-1", " wörld ✓"),
                new StreamPayload.ItemDone("item-1", new OutputItem("item-1", "message", "Hello wörld ✓", "agent",
                        null, null, null, null, null, "anthropic")),
                new StreamPayload.ItemDone("out-1", new OutputItem("out-1", "function_call_output", null, null,
                        "get_weather", json("{\"city\":\"Paris\"}"), "call-1", json("[{\"temp\":21.5}]"), true, null)),
                new StreamPayload.ItemDone("item-2", null),
                new StreamPayload.ItemDone("run-1-s3-compaction-1", new OutputItem("run-1-s3-compaction-1", "message",
                        "Summary: the user asked to fix the build.", "compaction", null, null, null, null, null, "anthropic")),
                new StreamPayload.ItemDone("out-2", new OutputItem("out-2", "function_call_output", null, null,
                        null, null, "call-2", NullNode.getInstance(), false, null)),
                new StreamPayload.ItemError("item-3", error),
                new StreamPayload.ItemError("item-3", ErrorInfo.of("boom", "it broke")),
                new StreamPayload.ItemCancelled("item-4"),
                new StreamPayload.ItemWithdrawn("item-5"),
                new StreamPayload.ResponseDone("resp-1", ResponseStatus.COMPLETE, new StreamPayload.Usage(12, 34, 46), "stop",
                        "claude-x", new StreamPayload.Usage(100, 7, 107, null, null, null, 0.0012)),
                new StreamPayload.ResponseDone("resp-1", ResponseStatus.COMPLETE, new StreamPayload.Usage(12, 34, 46), "stop"),
                new StreamPayload.ResponseDone("resp-1", ResponseStatus.ABORTED, null, null),
                new StreamPayload.ResponseDone("resp-1", ResponseStatus.COMPLETE, new StreamPayload.Usage(1200, 80, 1280, 1000L, 150L,
                        30L, 0.004815), "length", "claude-fallback"),
                new StreamPayload.ResponseError("resp-1", ErrorInfo.of("overloaded", "try later")),
                new StreamPayload.ResponseError("resp-1", ErrorInfo.of("overloaded_error", "busy"),
                        new StreamPayload.Usage(1200, 80, 1280, 1000L, 150L, 30L, 0.004815),
                        new StreamPayload.Usage(100, 7, 107, null, null, null, 0.0012)),
                new StreamPayload.TurnStatus(TurnActivity.RETRYING, 2, 1500L, null, null, ErrorInfo.of("rate_limit_error", "slow down"),
                        null, null),
                new StreamPayload.TurnStatus(TurnActivity.FALLBACK, null, null, "claude-x", "claude-y", null, null, null),
                new StreamPayload.TurnStatus(TurnActivity.COMPACTING, null, null, null, null, null, 180_000L, 200_000L),
                new StreamPayload.TurnStatus(TurnActivity.RUNNING, null, null, null, null, null, null, null),
                new StreamPayload.TurnStatus(TurnActivity.CONTINUING, null, null, null, null, null, null, null),
                new StreamPayload.TurnStatus(TurnActivity.STEP_COMPLETED, null, null, null, null, null, null, null, 2, "claude-x",
                        new StreamPayload.Usage(1200, 80, 1280, 1000L, null, 30L, 0.0021)),
                new StreamPayload.ToolStatus("call-item", "call-1", "get_weather", ToolState.COMPLETED, T, T + 40, null),
                new StreamPayload.ToolStatus(null, "call-2", null, ToolState.PENDING, null, null, null),
                new StreamPayload.ToolStatus("call-item", "call-3", "write_file", ToolState.ABORTED, T, T + 5,
                        ErrorInfo.of("ABORTED", "user pressed stop")));
    }

    static List<StreamEvent> streamEvents() {
        List<StreamEvent> events = new ArrayList<>();
        int n = 0;
        for (StreamPayload payload : streamPayloads()) {
            events.add(StreamEvent.of("evt-" + n++, T + n, "run-1", payload));
        }
        events.add(new StreamEvent("evt-traced", T, json("{\"traceparent\":\"00-abc-def-01\"}"), "run-1", "item_delta",
                new StreamPayload.ItemDelta("item-1", "x")));
        return events;
    }

    static UIUpsert messageUpsert(String turnId, String itemId, ChangeType changeType, long version, String content) {
        return UIUpsert.text(turnId, "thread-1", itemId, UiItemType.MESSAGE, changeType, version, content, "agent", null);
    }

    static UIUpsert toolCallUpsert(String turnId, String itemId, JsonNode arguments) {
        return new UIUpsert(UiPayloadType.ITEM_UPSERT, turnId, "thread-1", itemId, UiItemType.TOOL_CALL, ChangeType.COMPLETED, 1, "",
                null, "anthropic", "get_weather", arguments, "call-1", null, null, null, null);
    }

    static UIUpsert toolOutputUpsert(String turnId, String itemId, JsonNode output, boolean success) {
        return new UIUpsert(UiPayloadType.ITEM_UPSERT, turnId, "thread-1", itemId, UiItemType.TOOL_OUTPUT, ChangeType.COMPLETED, 1, "",
                null, null, "get_weather", null, "call-1", output, success, null, null);
    }

    static UIUpsert errorUpsert(String turnId, String itemId) {
        return new UIUpsert(UiPayloadType.ITEM_UPSERT, turnId, "thread-1", itemId, UiItemType.ERROR, ChangeType.COMPLETED, 1, "",
                null, null, null, null, null, null, null, "content_filter", "blocked");
    }

    static UITurnEvent turnStarted(String turnId) {
        return new UITurnEvent(UiPayloadType.TURN_STARTED, turnId, "thread-1", "claude-x", "anthropic", null, null, null);
    }

    static UITurnEvent turnCompleted(String turnId) {
        return new UITurnEvent(UiPayloadType.TURN_COMPLETED, turnId, "thread-1", "claude-x", "anthropic", ResponseStatus.COMPLETE,
                new UITurnEvent.Usage(10, 20, 30), null, "tenant-a");
    }

    static UITurnEvent turnCompletedWithEverything(String turnId) {
        return new UITurnEvent(UiPayloadType.TURN_COMPLETED, turnId, "thread-1", "claude-fallback", null, ResponseStatus.COMPLETE,
                new UITurnEvent.Usage(1200, 80, 1280, 1000L, 150L, 30L, 0.004815), null, "tenant-a", "max_steps",
                new UITurnEvent.Usage(300, 12, 312, null, null, null, 0.0009));
    }

    static UIStatus turnStatus(String turnId) {
        return new UIStatus(UiPayloadType.TURN_STATUS, turnId, "thread-1", "retrying", null, null, null, 2, 1500L, "claude-x",
                "claude-y", null, null, 180_000L, 200_000L, ErrorInfo.of("overloaded_error", "Overloaded"), 3, "claude-x",
                new UITurnEvent.Usage(10, 20, 30, 5L, 1L, 2L, 0.5));
    }

    static UIStatus toolStatus(String turnId) {
        return new UIStatus(UiPayloadType.TOOL_STATUS, turnId, "thread-1", "running", "call-item", "call-1", "get_weather",
                null, null, null, null, T, null, null, null, null, null, null, null);
    }

    static UITurnEvent turnError(String turnId) {
        return new UITurnEvent(UiPayloadType.TURN_ERROR, turnId, "thread-1", null, null, ResponseStatus.ERROR, null,
                ErrorInfo.of("TURN_TIMEOUT", "no event for 300 s"));
    }

    static UITurnEvent turnErrorWithUsage(String turnId) {
        return new UITurnEvent(UiPayloadType.TURN_ERROR, turnId, "thread-1", null, null, null,
                new UITurnEvent.Usage(1200, 80, 1280, 1000L, 150L, 30L, 0.004815), ErrorInfo.of("overloaded_error", "busy"),
                "tenant-a", null, new UITurnEvent.Usage(300, 12, 312, null, null, null, 0.0009));
    }

    static UpsertEnvelope envelope(long seq, UiPayload payload) {
        return new UpsertEnvelope("evt-" + payload.turnId() + "-" + seq, T + seq, payload.turnId(), seq,
                payload.payloadType(), payload);
    }

    static List<UpsertEnvelope> upsertEnvelopes() {
        return List.of(
                envelope(1, turnStarted("turn-1")),
                envelope(2, messageUpsert("turn-1", "item-1", ChangeType.CREATED, 1, "Hel")),
                envelope(3, UIUpsert.text("turn-1", "thread-1", "item-2", UiItemType.REASONING, ChangeType.UPDATED, 2, "thinking",
                        "agent", "anthropic")),
                envelope(4, toolCallUpsert("turn-1", "call-item", json("{\"city\":\"Paris\"}"))),
                envelope(5, toolCallUpsert("turn-1", "call-item-raw", TextNode.valueOf("not json {"))),
                envelope(6, toolOutputUpsert("turn-1", "out-1", json("{\"temp\":21.5,\"ok\":true}"), true)),
                envelope(7, errorUpsert("turn-1", "item-3")),
                envelope(8, turnCompleted("turn-1")),
                envelope(9, turnError("turn-2")),
                envelope(10, turnStatus("turn-3")),
                envelope(11, toolStatus("turn-3")),
                envelope(12, turnCompletedWithEverything("turn-3")),
                envelope(13, UIUpsert.withdrawn("turn-3", "thread-1", "call-item", UiItemType.TOOL_CALL, 2, "call-1")),
                envelope(14, turnErrorWithUsage("turn-4")));
    }

    static List<ToolCall> toolCalls() {
        return List.of(
                new ToolCall("call-1", "turn-1", "thread-1", "run-1", "call-item", "get_weather",
                        json("{\"city\":\"Paris\",\"nested\":{\"a\":[1,2,3]}}"), T),
                new ToolCall("call-2", "turn-1", "thread-1", "run-1", "call-item-2", "echo", TextNode.valueOf("raw text"), T),
                new ToolCall("call-3", "turn-1", "thread-1", "run-1", "call-item-3", "read_file",
                        json("{\"path\":\"README.md\"}"), T, "tenant-a"));
    }

    static List<ToolResult> toolResults() {
        return List.of(
                new ToolResult("call-1", "turn-1", "get_weather", true, json("{\"temp\":21.5}"), null, T, T + 40),
                new ToolResult("call-2", "turn-1", "echo", false, null, ErrorInfo.of("TOOL_TIMEOUT", "took too long"), T, T + 30_000),
                new ToolResult("call-3", "turn-1", "echo", true, TextNode.valueOf("plain"), null, T, T + 1));
    }

    static List<ControlMessage> controlMessages() {
        return List.of(ControlMessage.cancel("turn-1", "user pressed stop"), ControlMessage.cancel("turn-2", null),
                ControlMessage.approval("turn-1", "call-1", true, null),
                ControlMessage.approval("turn-1", "call-2", false, "not in production"),
                ControlMessage.toolStarted("turn-1", "call-3", T),
                ControlMessage.approvalRequested("turn-1", "call-4", "read_file", null, ControlMessage.ASK_POLICY),
                ControlMessage.approvalRequested("turn-1", "call-5", "write_file",
                        json("{\"path\":\"a.txt\",\"content\":\"x\"}"), ControlMessage.ASK_DOOM_LOOP),
                ControlMessage.approval("turn-1", "call-5", true, null, true));
    }

    static List<ItemAppend> itemAppends() {
        return List.of(new ItemAppend("turn-1", "run-1-s1-msg0", 1, 0, "Hello, ", T), new ItemAppend("turn-1",
                "run-1-s1-msg0", 2, 7, "w\u00f6rld \uD83D\uDE00", T + 40));
    }

    static List<TurnRequestRecord> turnRequests() {
        TurnRequestRecord request = TurnRequestRecord.request("turn-1", "thread-1", "run-1", "tenant-a", T,
                json("{\"prompt\":\"What is in this workspace?\",\"maxSteps\":3}"));
        return List.of(request,
                TurnRequestRecord.request("turn-2", "thread-1", "run-2", null, T, json("{\"prompt\":\"Hi\"}")),
                request.stepDone(1, json("{\"model\":\"claude-x\",\"assistant\":[{\"type\":\"text\",\"text\":\"Hi\"}],"
                        + "\"toolCalls\":[],\"finishReason\":\"stop\"}")));
    }


    static List<PublishedTool> publishedTools() {
        return List.of(new PublishedTool("read_file", "Reads a file of the workspace.", Json.MAPPER.createObjectNode()
                .put("type", "object").set("properties", Json.MAPPER.createObjectNode().set("path",
                        Json.MAPPER.createObjectNode().put("type", "string"))), true, "executor-1", T));
    }

    /** Every sample of every topic value type. */
    static List<Object> all() {
        List<Object> all = new ArrayList<>();
        all.addAll(streamEvents());
        all.addAll(upsertEnvelopes());
        all.addAll(toolCalls());
        all.addAll(toolResults());
        all.addAll(controlMessages());
        all.addAll(itemAppends());
        all.addAll(turnRequests());
        all.addAll(publishedTools());
        return all;
    }
}
