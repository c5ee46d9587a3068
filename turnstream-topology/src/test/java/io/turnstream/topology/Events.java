package io.turnstream.topology;

import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.OutputItem;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload;

/** Builders for the raw events a gateway would publish, so tests read like the stream they send. */
final class Events {

    private Events() {
    }

    static StreamPayload.ResponseStart responseStart(String turnId, String provider) {
        return new StreamPayload.ResponseStart("resp-" + turnId, turnId, "thread-1", null, "model-x", provider, 0);
    }

    static StreamPayload.ItemStart itemStart(String itemId, String itemType) {
        return new StreamPayload.ItemStart(itemId, itemType, null, null, null, null, null);
    }

    static StreamPayload.ItemStart itemStartWith(String itemId, String itemType, String initialContent) {
        return new StreamPayload.ItemStart(itemId, itemType, initialContent, null, null, null, null);
    }

    static StreamPayload.ItemStart functionCallStart(String itemId, String name, String callId) {
        return new StreamPayload.ItemStart(itemId, "function_call", null, name, null, callId, null);
    }

    static StreamPayload.ItemDelta delta(String itemId, String text) {
        return new StreamPayload.ItemDelta(itemId, text);
    }

    /** An item_delta as raw JSON, its text already escaped: a JSON producer may escape each half of a surrogate pair alone. */
    static String rawDelta(String runId, String itemId, String escapedText) {
        return "{\"event_id\":\"e\",\"timestamp\":0,\"run_id\":\"" + runId + "\",\"type\":\"item_delta\","
                + "\"payload\":{\"type\":\"item_delta\",\"item_id\":\"" + itemId + "\",\"delta_content\":\"" + escapedText + "\"}}";
    }

    static StreamPayload.ItemDone done(String itemId) {
        return new StreamPayload.ItemDone(itemId, null);
    }

    static StreamPayload.ItemDone doneWithContent(String itemId, String type, String content, String origin) {
        return new StreamPayload.ItemDone(itemId, new OutputItem(itemId, type, content, origin, null, null, null, null, null, null));
    }

    static StreamPayload.ItemDone functionCallDone(String itemId, String name, String arguments, String callId) {
        return new StreamPayload.ItemDone(itemId, new OutputItem(itemId, "function_call", null, null, name,
                TextNode.valueOf(arguments), callId, null, null, null));
    }

    static StreamPayload.ItemDone functionOutputDone(String itemId, String callId, String output, boolean success) {
        return new StreamPayload.ItemDone(itemId, new OutputItem(itemId, "function_call_output", null, null, null,
                null, callId, TextNode.valueOf(output), success, null));
    }

    static StreamPayload.ItemError itemError(String itemId, String code, String message) {
        return new StreamPayload.ItemError(itemId, ErrorInfo.of(code, message));
    }

    static StreamPayload.ItemCancelled cancelled(String itemId) {
        return new StreamPayload.ItemCancelled(itemId);
    }

    static StreamPayload.ItemWithdrawn withdrawn(String itemId) {
        return new StreamPayload.ItemWithdrawn(itemId);
    }

    static StreamPayload.ResponseDone responseDone(ResponseStatus status) {
        return new StreamPayload.ResponseDone("resp", status, new StreamPayload.Usage(12, 34, 46), "stop");
    }

    static StreamPayload.ResponseError responseError(String code, String message) {
        return new StreamPayload.ResponseError("resp", ErrorInfo.of(code, message));
    }
}
