package io.turnstream.gateway.openai;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.turnstream.gateway.http.EventStream;
import io.turnstream.model.Json;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UIUpsert;
import java.util.List;
import java.util.Set;

/**
 * A turn in Chat Completions' shapes: the whole {@code chat.completion} and, streaming, its
 * {@code chat.completion.chunk}s ({@code data:} lines ending with {@code data: [DONE]}). The completion's
 * id is the turn id. The content is the assistant's messages joined by blank lines; client-side calls
 * are {@code tool_calls} (finish reason {@code tool_calls}).
 */
final class ChatCompletions {

    private ChatCompletions() {
    }

    /** The whole completion of an ended turn that did not fail. */
    static ObjectNode completion(TurnAnswer answer, String model, long created) {
        ObjectNode body = head(answer.turnId(), "chat.completion", model, created);
        ObjectNode choice = body.putArray("choices").addObject().put("index", 0);
        ObjectNode message = choice.putObject("message").put("role", "assistant");
        String text = answer.text();
        if (text.isEmpty() && !answer.clientCalls().isEmpty()) {
            message.putNull("content");
        } else {
            message.put("content", text);
        }
        message.putNull("refusal");
        if (!answer.clientCalls().isEmpty()) {
            ArrayNode calls = message.putArray("tool_calls");
            answer.clientCalls().forEach(call -> calls.add(toolCall(call)));
        }
        choice.putNull("logprobs");
        choice.put("finish_reason", TurnAnswer.chatFinishReason(answer.end(), !answer.clientCalls().isEmpty()));
        body.set("usage", usage(answer.end()));
        return body;
    }

    private static ObjectNode head(String id, String object, String model, long created) {
        return Json.MAPPER.createObjectNode().put("id", id).put("object", object).put("created", created)
                .put("model", model).putNull("system_fingerprint");
    }

    private static ObjectNode toolCall(UIUpsert call) {
        ObjectNode json = Json.MAPPER.createObjectNode().put("id", call.callId()).put("type", "function");
        json.putObject("function").put("name", call.toolName()).put("arguments", TurnAnswer.arguments(call));
        return json;
    }

    static ObjectNode usage(UITurnEvent end) {
        ObjectNode usage = Json.MAPPER.createObjectNode();
        UITurnEvent.Usage used = end == null ? null : end.usage();
        usage.put("prompt_tokens", used == null ? 0 : used.promptTokens())
                .put("completion_tokens", used == null ? 0 : used.completionTokens())
                .put("total_tokens", used == null ? 0 : used.totalTokens());
        return usage;
    }

    /** The streaming completion. */
    static final class Stream extends AnswerStream {

        private final long created;
        private final boolean includeUsage;
        private boolean saidSomething;

        Stream(String turnId, String model, Set<String> clientTools, long created, boolean includeUsage) {
            super(turnId, model, clientTools);
            this.created = created;
            this.includeUsage = includeUsage;
        }

        @Override
        public void open(EventStream client) {
            ObjectNode delta = Json.MAPPER.createObjectNode().put("role", "assistant").put("content", "");
            send(client, chunk(delta, null));
        }

        @Override
        protected void textStarted(String itemId, EventStream client) {
            if (saidSomething) {
                delta(client, "\n\n");
            }
        }

        @Override
        protected void textDelta(String itemId, String delta, EventStream client) {
            saidSomething = true;
            delta(client, delta);
        }

        @Override
        protected void textEnded(String itemId, String text, EventStream client) {
            // Chat Completions has no end of a message within a choice
        }

        @Override
        protected void clientCall(UIUpsert call, int index, EventStream client) {
            ObjectNode delta = Json.MAPPER.createObjectNode();
            delta.putArray("tool_calls").add(toolCall(call).put("index", index));
            send(client, chunk(delta, null));
        }

        @Override
        protected void finished(UITurnEvent end, EventStream client) {
            TurnAnswer ended = new TurnAnswer(turnId, List.of(), List.of(), end);
            if (ended.failed() || ended.cancelled()) {
                // how the OpenAI SDKs read a failure inside a stream: they throw it
                ObjectNode error = Json.MAPPER.createObjectNode();
                error.set("error", OpenAiErrors.body(ended.cancelled() ? 409 : 502, ended.problem()).get("error"));
                send(client, error);
                return;
            }
            send(client, chunk(Json.MAPPER.createObjectNode(), TurnAnswer.chatFinishReason(end, calls > 0)));
            if (includeUsage) {
                ObjectNode last = head(turnId, "chat.completion.chunk", model, created);
                last.putArray("choices");
                last.set("usage", usage(end));
                send(client, last);
            }
        }

        @Override
        public void close(EventStream client) {
            client.sendData("[DONE]");
        }

        private void delta(EventStream client, String text) {
            send(client, chunk(Json.MAPPER.createObjectNode().put("content", text), null));
        }

        private ObjectNode chunk(ObjectNode delta, String finishReason) {
            ObjectNode chunk = head(turnId, "chat.completion.chunk", model, created);
            ObjectNode choice = chunk.putArray("choices").addObject().put("index", 0);
            choice.set("delta", delta);
            choice.putNull("logprobs");
            if (finishReason == null) {
                choice.putNull("finish_reason");
            } else {
                choice.put("finish_reason", finishReason);
            }
            if (includeUsage) {
                chunk.putNull("usage");
            }
            return chunk;
        }

        private static void send(EventStream client, ObjectNode json) {
            client.sendData(json.toString());
        }
    }
}
