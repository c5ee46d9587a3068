package io.turnstream.gateway.openai;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.gateway.http.ApiError;
import io.turnstream.gateway.provider.Conversation;
import io.turnstream.model.Json;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The conversation of an OpenAI-compatible request as the turn takes it, built message by message
 * from either API's shape: system text, the history (text, client-side tool calls and their results)
 * and the prompt, which is the last user message, or none when the conversation ends with tool results
 * (the answer to a client-side call, continuing the thread). Every problem is a 400 that says what to fix.
 */
final class OpenAiConversation {

    private final List<String> system = new ArrayList<>();
    private final List<Conversation.Entry> entries = new ArrayList<>();
    /** Calls said but not yet answered, by call id; each must get its result before anything else is said. */
    private final Map<String, Conversation.ToolCall> unanswered = new LinkedHashMap<>();
    private final Map<String, String> callNames = new HashMap<>();
    private String pendingText;
    private final List<Conversation.ToolCall> pendingCalls = new ArrayList<>();
    private final List<Conversation.ToolOutput> pendingOutputs = new ArrayList<>();

    void system(String text) {
        if (!text.isBlank()) {
            system.add(text);
        }
    }

    void user(String text, List<Conversation.FilePart> files, String where) {
        flush(where);
        if (text.isBlank() && files.isEmpty()) {
            throw ApiError.badRequest(where + " has no text and no file");
        }
        entries.add(new Conversation.UserText(text, files));
    }

    void assistant(String text, String where) {
        flush(where);
        if (text != null && !text.isBlank()) {
            pendingText = text;
        }
    }

    /** A call of a client-side tool the assistant made; {@code arguments} is the JSON text the model wrote. */
    void toolCall(String callId, String name, String arguments, String where) {
        if (callId == null || callId.isBlank() || name == null || name.isBlank()) {
            throw ApiError.badRequest(where + " needs a call id and a name");
        }
        if (!pendingOutputs.isEmpty()) {
            flush(where);
        }
        JsonNode parsed;
        try {
            parsed = Json.MAPPER.readTree(arguments == null || arguments.isBlank() ? "{}" : arguments);
        } catch (JsonProcessingException e) {
            throw ApiError.badRequest(where + ".arguments is not JSON: " + e.getOriginalMessage());
        }
        if (parsed == null || !parsed.isObject()) {
            throw ApiError.badRequest(where + ".arguments must be a JSON object");
        }
        Conversation.ToolCall call = new Conversation.ToolCall(callId, name, parsed);
        pendingCalls.add(call);
        unanswered.put(callId, call);
        callNames.put(callId, name);
    }

    /**
     * Calls the previous response made that this request may answer ({@code previous_response_id}): the thread
     * already holds them, so only their results are said here.
     */
    void answering(List<Conversation.ToolCall> calls) {
        calls.forEach(call -> {
            unanswered.put(call.callId(), call);
            callNames.put(call.callId(), call.name());
        });
    }

    /** A tool call's result, sent by the caller who ran it. */
    void toolResult(String callId, String output, String where) {
        if (!pendingCalls.isEmpty()) {
            entries.add(new Conversation.AssistantToolCalls(pendingText, pendingCalls));
            pendingText = null;
            pendingCalls.clear();
        }
        if (callId == null || unanswered.remove(callId) == null) {
            throw ApiError.badRequest(where + " answers call '" + callId + "', which no earlier assistant message made"
                    + " (or which was answered already)");
        }
        pendingOutputs.add(new Conversation.ToolOutput(callId, callNames.get(callId), output, true));
    }

    /** Ends the run of calls or results before a message of another kind. */
    private void flush(String where) {
        if (!pendingCalls.isEmpty() || !unanswered.isEmpty()) {
            throw ApiError.badRequest("tool call '" + (unanswered.isEmpty() ? pendingCalls.get(0).callId()
                    : unanswered.keySet().iterator().next()) + "' has no result before " + where
                    + ": every call needs its result right after the assistant message that made it");
        }
        if (pendingText != null) {
            entries.add(new Conversation.AssistantText(pendingText));
            pendingText = null;
        }
        if (!pendingOutputs.isEmpty()) {
            entries.add(new Conversation.ToolOutputs(pendingOutputs));
            pendingOutputs.clear();
        }
    }

    /** What was said, in the turn's terms. */
    record Parsed(String system, List<Conversation.Entry> history, String prompt, List<Conversation.FilePart> files) {
    }

    /**
     * Finishes the conversation: the last thing said must be a user message (the prompt) or the
     * results of every call of the last assistant message (no prompt).
     */
    Parsed finish() {
        String systemPrompt = system.isEmpty() ? null : String.join("\n\n", system);
        if (!pendingOutputs.isEmpty() && unanswered.isEmpty()) {
            entries.add(new Conversation.ToolOutputs(pendingOutputs));
            return new Parsed(systemPrompt, entries, null, List.of());
        }
        if (!unanswered.isEmpty()) {
            throw ApiError.badRequest("tool call '" + unanswered.keySet().iterator().next() + "' has no result");
        }
        if (entries.isEmpty() || !(entries.get(entries.size() - 1) instanceof Conversation.UserText user)
                || pendingText != null) {
            throw ApiError.badRequest("the conversation must end with a user message or with the results of the "
                    + "last assistant message's tool calls");
        }
        return new Parsed(systemPrompt, entries.subList(0, entries.size() - 1), user.text(), user.files());
    }
}
