package io.turnstream.gateway.chat;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.gateway.http.ApiError;
import io.turnstream.gateway.http.JsonBody;
import io.turnstream.gateway.provider.Conversation;
import io.turnstream.gateway.turn.FileParts;
import io.turnstream.gateway.turn.TurnRequest;
import io.turnstream.model.Json;
import java.util.ArrayList;
import java.util.List;

/**
 * The body of {@code POST /api/chat} as the AI SDK's {@code DefaultChatTransport} sends it:
 * {@code {id, messages, trigger, messageId?}} plus what the app adds with useChat's {@code body}
 * ({@code provider}, {@code model}, {@code system}, {@code maxSteps}). The chat id is the turn's
 * thread. Messages are UI messages ({@code parts}) or plain ({@code content}); their text parts
 * become the conversation, a user message's {@code file} parts ({@code {mediaType, url, filename?}}) its files,
 * system messages the system prompt, the last (user) message the prompt.
 * A client that keeps its history on the server sends only the new user message, as the AI SDK's
 * {@code prepareSendMessagesRequest} does: {@code {id, message}}, or {@code messages} holding that one
 * message; the gateway then puts the chat's conversation before it (server-side threads).
 */
final class ChatRequest {

    private static final List<String> FIELDS = List.of("id", "messages", "message", "trigger", "messageId", "provider",
            "model", "system", "maxSteps");
    private static final List<String> TRIGGERS = List.of("submit-message", "regenerate-message");

    private ChatRequest() {
    }

    /** The turn the body asks for; every problem is a 400 that says what to fix. */
    static TurnRequest parse(String body) {
        JsonNode json = JsonBody.object(body, FIELDS, "{id, messages, trigger}, as useChat sends it");
        String chatId = JsonBody.requireId("the chat id 'id'", text(json, "id", true));
        String trigger = text(json, "trigger", false);
        if (trigger != null && !TRIGGERS.contains(trigger)) {
            throw ApiError.badRequest("'trigger' must be one of " + String.join(", ", TRIGGERS) + ", got '" + trigger + "'");
        }
        text(json, "messageId", false);
        JsonNode messages = json.get("messages");
        JsonNode newMessage = json.get("message");
        if (newMessage != null && !newMessage.isNull()) {
            if (messages != null && !messages.isNull()) {
                throw ApiError.badRequest("give either 'messages' (the whole chat) or 'message' (the new one), not both");
            }
            messages = Json.MAPPER.createArrayNode().add(newMessage);
        }
        if (messages == null || !messages.isArray() || messages.isEmpty()) {
            throw ApiError.badRequest("'messages' must be a non-empty list of {role, parts} or {role, content}"
                    + " (or 'message' the new one)");
        }
        List<String> system = new ArrayList<>();
        String explicitSystem = text(json, "system", false);
        if (explicitSystem != null) {
            system.add(explicitSystem);
        }
        List<Conversation.Entry> history = new ArrayList<>();
        Conversation.UserText prompt = null;
        for (int i = 0; i < messages.size(); i++) {
            JsonNode message = messages.get(i);
            String where = "messages[" + i + "]";
            if (!message.isObject()) {
                throw ApiError.badRequest(where + " must be an object {role, parts} or {role, content}");
            }
            String role = message.path("role").asText("");
            String content = textOf(message, where);
            boolean last = i == messages.size() - 1;
            if (last && !"user".equals(role)) {
                throw ApiError.badRequest("the last message must be the user's: it is the turn's prompt");
            }
            switch (role) {
                // the SDK sends an empty system message when the app sets none: it says nothing
                case "system" -> {
                    if (!content.isBlank()) {
                        system.add(content);
                    }
                }
                case "user" -> {
                    Conversation.UserText user = new Conversation.UserText(content, filesOf(message, where));
                    if (content.isBlank() && user.files().isEmpty()) {
                        throw ApiError.badRequest(where + " has no text and no file");
                    }
                    if (last) {
                        prompt = user;
                    } else {
                        history.add(user);
                    }
                }
                // the gateway's own answer (its id is the turn id): the turn's steps come from Kafka, tool calls,
                // results and reasoning included; another assistant message says its text, if it has any
                case "assistant" -> {
                    String id = JsonBody.optionalText(message, "id");
                    if (id != null && id.startsWith("turn-")) {
                        history.add(new Conversation.EarlierTurn(id, content));
                    } else if (!content.isBlank()) {
                        history.add(new Conversation.AssistantText(content));
                    }
                }
                default -> throw ApiError.badRequest(where + ".role must be 'system', 'user' or 'assistant'");
            }
        }
        // the new message alone: the chat's conversation comes from its thread
        boolean fromThread = messages.size() == 1;
        return new TurnRequest(text(json, "provider", false), text(json, "model", false), chatId,
                system.isEmpty() ? null : String.join("\n\n", system), history, prompt.text(), null,
                TurnRequest.maxSteps(json.get("maxSteps")), null, null, fromThread, prompt.files());
    }

    /** A UI message's {@code file} parts. */
    private static List<Conversation.FilePart> filesOf(JsonNode message, String where) {
        List<Conversation.FilePart> files = new ArrayList<>();
        JsonNode parts = message.path("parts");
        for (int i = 0; i < parts.size(); i++) {
            JsonNode part = parts.get(i);
            if ("file".equals(part.path("type").asText())) {
                files.add(FileParts.fromUrl(where + ".parts[" + i + "]", part.path("url").asText(null),
                        part.path("mediaType").asText(null), part.path("filename").asText(null)));
            }
        }
        return files;
    }

    /** The text of a message: its {@code content} string, or its {@code text} parts joined. */
    private static String textOf(JsonNode message, String where) {
        JsonNode parts = message.get("parts");
        JsonNode content = message.get("content");
        if (parts != null && parts.isArray()) {
            StringBuilder text = new StringBuilder();
            for (JsonNode part : parts) {
                if ("text".equals(part.path("type").asText()) && part.path("text").isTextual()) {
                    text.append(part.get("text").asText());
                }
            }
            return text.toString();
        }
        if (content != null && content.isTextual()) {
            return content.asText();
        }
        throw ApiError.badRequest(where + " needs 'parts' (a list) or 'content' (a string)");
    }

    private static String text(JsonNode json, String field, boolean required) {
        String value = JsonBody.optionalText(json, field);
        if (value == null && required) {
            throw ApiError.badRequest("'" + field + "' is required");
        }
        return value;
    }
}
