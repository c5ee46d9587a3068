package io.turnstream.gateway.openai;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.turnstream.gateway.http.EventStream;
import io.turnstream.model.Json;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UIUpsert;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A turn in the Responses API's shapes: the whole {@code response} and, streaming, its typed events
 * ({@code event:} and {@code data:} lines, numbered by {@code sequence_number}). The response id is the
 * turn id. Each assistant message is a {@code message} output item (its item id the turn's), each
 * client-side call a {@code function_call} item. A failed turn is {@code status: "failed"} with its
 * {@code error}, a cancelled one {@code "cancelled"}.
 */
final class Responses {

    private Responses() {
    }

    /**
     * The whole response of an ended turn.
     *
     * @param previousResponseId the response it continued, as the request named it; null for none
     */
    static ObjectNode response(TurnAnswer answer, String model, String previousResponseId, long createdAt) {
        List<ObjectNode> output = new ArrayList<>();
        List<UIUpsert> said = new ArrayList<>(answer.messages());
        said.addAll(answer.clientCalls());
        said.sort(TurnAnswer.SAID_ORDER);
        for (UIUpsert item : said) {
            output.add(answer.clientCalls().contains(item) ? functionCall(item, "completed")
                    : message(item.itemId(), item.content() == null ? "" : item.content(), "completed"));
        }
        return envelope(answer.turnId(), model, previousResponseId, createdAt, answer.end(), output);
    }

    private static ObjectNode envelope(String id, String model, String previousResponseId, long createdAt,
                                       UITurnEvent end, List<ObjectNode> output) {
        ObjectNode body = Json.MAPPER.createObjectNode().put("id", id).put("object", "response")
                .put("created_at", createdAt).put("model", model);
        TurnAnswer ended = new TurnAnswer(id, List.of(), List.of(), end);
        String status = end == null ? "in_progress" : ended.cancelled() ? "cancelled" : ended.failed() ? "failed"
                : "completed";
        body.put("status", status);
        if ("failed".equals(status)) {
            body.putObject("error").put("code", end.error() == null ? "server_error" : end.error().code())
                    .put("message", ended.problem());
        } else {
            body.putNull("error");
        }
        body.putNull("incomplete_details");
        if (previousResponseId == null) {
            body.putNull("previous_response_id");
        } else {
            body.put("previous_response_id", previousResponseId);
        }
        body.put("parallel_tool_calls", true).put("tool_choice", "auto");
        body.putArray("tools");
        body.putObject("metadata");
        ArrayNode items = body.putArray("output");
        output.forEach(items::add);
        if (end == null) {
            body.putNull("usage");
        } else {
            UITurnEvent.Usage used = end.usage();
            ObjectNode usage = body.putObject("usage");
            usage.put("input_tokens", used == null ? 0 : used.promptTokens());
            usage.putObject("input_tokens_details").put("cached_tokens",
                    used == null || used.cacheReadTokens() == null ? 0 : used.cacheReadTokens());
            usage.put("output_tokens", used == null ? 0 : used.completionTokens());
            usage.putObject("output_tokens_details").put("reasoning_tokens",
                    used == null || used.reasoningTokens() == null ? 0 : used.reasoningTokens());
            usage.put("total_tokens", used == null ? 0 : used.totalTokens());
        }
        return body;
    }

    private static ObjectNode message(String id, String text, String status) {
        ObjectNode item = Json.MAPPER.createObjectNode().put("type", "message").put("id", id).put("status", status)
                .put("role", "assistant");
        ArrayNode content = item.putArray("content");
        if (text != null) {
            content.add(outputText(text));
        }
        return item;
    }

    private static ObjectNode outputText(String text) {
        ObjectNode part = Json.MAPPER.createObjectNode().put("type", "output_text").put("text", text);
        part.putArray("annotations");
        return part;
    }

    private static ObjectNode functionCall(UIUpsert call, String status) {
        return Json.MAPPER.createObjectNode().put("type", "function_call").put("id", call.itemId())
                .put("call_id", call.callId()).put("name", call.toolName())
                .put("arguments", "completed".equals(status) ? TurnAnswer.arguments(call) : "").put("status", status);
    }

    /** The streaming response. */
    static final class Stream extends AnswerStream {

        private final long createdAt;
        private final String previousResponseId;
        private final List<ObjectNode> output = new ArrayList<>();
        private final Map<String, Integer> outputIndex = new HashMap<>();
        private long sequence;

        Stream(String turnId, String model, String previousResponseId, Set<String> clientTools, long createdAt) {
            super(turnId, model, clientTools);
            this.previousResponseId = previousResponseId;
            this.createdAt = createdAt;
        }

        @Override
        public void open(EventStream client) {
            ObjectNode created = event("response.created");
            created.set("response", envelope(turnId, model, previousResponseId, createdAt, null, List.of()));
            send(client, created);
            ObjectNode progress = event("response.in_progress");
            progress.set("response", envelope(turnId, model, previousResponseId, createdAt, null, List.of()));
            send(client, progress);
        }

        @Override
        protected void textStarted(String itemId, EventStream client) {
            int index = output.size();
            outputIndex.put(itemId, index);
            output.add(message(itemId, null, "in_progress"));
            ObjectNode added = event("response.output_item.added").put("output_index", index);
            added.set("item", message(itemId, null, "in_progress"));
            send(client, added);
            ObjectNode part = part("response.content_part.added", itemId);
            part.set("part", outputText(""));
            send(client, part);
        }

        @Override
        protected void textDelta(String itemId, String delta, EventStream client) {
            send(client, part("response.output_text.delta", itemId).put("delta", delta));
        }

        @Override
        protected void textEnded(String itemId, String text, EventStream client) {
            send(client, part("response.output_text.done", itemId).put("text", text));
            ObjectNode part = part("response.content_part.done", itemId);
            part.set("part", outputText(text));
            send(client, part);
            ObjectNode item = message(itemId, text, "completed");
            output.set(outputIndex.get(itemId), item);
            ObjectNode done = event("response.output_item.done").put("output_index", outputIndex.get(itemId));
            done.set("item", item);
            send(client, done);
        }

        @Override
        protected void clientCall(UIUpsert call, int index, EventStream client) {
            int at = output.size();
            ObjectNode item = functionCall(call, "completed");
            output.add(item);
            ObjectNode added = event("response.output_item.added").put("output_index", at);
            added.set("item", functionCall(call, "in_progress"));
            send(client, added);
            String arguments = TurnAnswer.arguments(call);
            send(client, event("response.function_call_arguments.delta").put("item_id", call.itemId())
                    .put("output_index", at).put("delta", arguments));
            send(client, event("response.function_call_arguments.done").put("item_id", call.itemId())
                    .put("output_index", at).put("arguments", arguments));
            ObjectNode done = event("response.output_item.done").put("output_index", at);
            done.set("item", item);
            send(client, done);
        }

        @Override
        protected void finished(UITurnEvent end, EventStream client) {
            ObjectNode response = envelope(turnId, model, previousResponseId, createdAt, end, output);
            String status = response.get("status").asText();
            ObjectNode last = event("completed".equals(status) ? "response.completed"
                    : "cancelled".equals(status) ? "response.incomplete" : "response.failed");
            last.set("response", response);
            send(client, last);
        }

        private ObjectNode part(String type, String itemId) {
            return event(type).put("item_id", itemId).put("output_index", outputIndex.get(itemId))
                    .put("content_index", 0);
        }

        private ObjectNode event(String type) {
            return Json.MAPPER.createObjectNode().put("type", type).put("sequence_number", sequence++);
        }

        private static void send(EventStream client, ObjectNode event) {
            client.sendEvent(event.get("type").asText(), event.toString());
        }
    }
}
