package io.turnstream.gateway.turn;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.turnstream.gateway.http.ApiError;
import io.turnstream.gateway.http.JsonBody;
import io.turnstream.gateway.provider.Conversation;
import io.turnstream.gateway.provider.ToolDefinition;
import io.turnstream.model.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * A request to start a turn: the body of {@code POST /v1/turns}, validated.
 *
 * @param provider null for the default provider
 * @param model null for the provider's default (only the simulated provider has one)
 * @param threadId null for a new thread
 * @param history the conversation before the prompt (from {@code messages})
 * @param prompt the last user message: the turn's prompt; null when the conversation ends with tool results
 *               (a client-side tool's result continuing the thread)
 * @param tools null for the built-in tools; empty for none
 * @param maxSteps null for the configured default
 * @param fallbackModel null for the configured default
 * @param clientTools tools the caller runs itself (declared in an OpenAI-compatible request): offered to the
 *                    model besides {@code tools}; the turn stops at a call of one and returns it to the caller
 * @param fromThread the request sends only what is new ({@code history}: what it adds before the prompt): the
 *                   gateway running the turn puts the thread's conversation before it (see
 *                   {@link io.turnstream.gateway.thread.ThreadConversation})
 * @param files the files attached to the prompt (images, PDFs; {@link FileParts}), none for most
 */
public record TurnRequest(String provider, String model, String threadId, String system,
                          List<Conversation.Entry> history, String prompt, List<ToolDefinition> tools,
                          Integer maxSteps, String fallbackModel, List<ToolDefinition> clientTools,
                          boolean fromThread, List<Conversation.FilePart> files) {

    public static final int MAX_STEPS_LIMIT = 100;

    private static final List<String> FIELDS = List.of("provider", "model", "threadId", "system", "messages", "prompt",
            "files", "tools", "maxSteps", "fallbackModel");
    private static final Pattern TOOL_NAME = Pattern.compile("[A-Za-z0-9_-]{1,64}");

    public TurnRequest {
        history = List.copyOf(history);
        tools = tools == null ? null : List.copyOf(tools);
        clientTools = clientTools == null ? List.of() : List.copyOf(clientTools);
        files = files == null ? List.of() : List.copyOf(files);
    }

    /** A request whose prompt has no files. */
    public TurnRequest(String provider, String model, String threadId, String system, List<Conversation.Entry> history,
                       String prompt, List<ToolDefinition> tools, Integer maxSteps, String fallbackModel,
                       List<ToolDefinition> clientTools, boolean fromThread) {
        this(provider, model, threadId, system, history, prompt, tools, maxSteps, fallbackModel, clientTools,
                fromThread, List.of());
    }

    /** A request that does not continue its thread's conversation. */
    public TurnRequest(String provider, String model, String threadId, String system, List<Conversation.Entry> history,
                       String prompt, List<ToolDefinition> tools, Integer maxSteps, String fallbackModel,
                       List<ToolDefinition> clientTools) {
        this(provider, model, threadId, system, history, prompt, tools, maxSteps, fallbackModel, clientTools, false);
    }

    /** A request without client-side tools. */
    public TurnRequest(String provider, String model, String threadId, String system, List<Conversation.Entry> history,
                       String prompt, List<ToolDefinition> tools, Integer maxSteps, String fallbackModel) {
        this(provider, model, threadId, system, history, prompt, tools, maxSteps, fallbackModel, null);
    }

    /** A single-prompt turn with every default. */
    public static TurnRequest prompt(String provider, String model, String prompt) {
        return new TurnRequest(provider, model, null, null, List.of(), prompt, null, null, null);
    }

    /** This request with {@code conversation} as its whole history (the thread's, rebuilt): it no longer continues. */
    public TurnRequest withHistory(List<Conversation.Entry> conversation) {
        return new TurnRequest(provider, model, threadId, system, conversation, prompt, tools, maxSteps, fallbackModel,
                clientTools, false, files);
    }

    /** This request for another thread, or continuing its thread's conversation ({@code fromThread}). */
    public TurnRequest inThread(String thread, boolean continues) {
        return new TurnRequest(provider, model, thread, system, history, prompt, tools, maxSteps, fallbackModel,
                clientTools, continues, files);
    }

    /** The conversation the first step sends: the history, then the prompt. */
    public List<Conversation.Entry> conversation() {
        List<Conversation.Entry> all = new ArrayList<>(history);
        if (prompt != null) {
            all.add(new Conversation.UserText(prompt, files));
        }
        return all;
    }

    /**
     * The request as a {@code POST /v1/turns} body: what {@link #parse} reads back into an equal
     * request. It travels on {@code llm.turn-requests} to the gateway that runs the turn.
     */
    public ObjectNode toJson() {
        ObjectNode body = Json.MAPPER.createObjectNode();
        putIfSet(body, "provider", provider);
        putIfSet(body, "model", model);
        putIfSet(body, "threadId", threadId);
        putIfSet(body, "system", system);
        if (history.isEmpty()) {
            body.put("prompt", prompt);
            writeFiles(files, body);
        } else {
            ArrayNode messages = body.putArray("messages");
            history.forEach(entry -> writeEntry(entry, messages.addObject()));
            if (prompt != null) {
                writeEntry(new Conversation.UserText(prompt, files), messages.addObject());
            }
        }
        if (tools != null) {
            writeTools(tools, body.putArray("tools"));
        }
        if (!clientTools.isEmpty()) {
            writeTools(clientTools, body.putArray("clientTools"));
        }
        if (maxSteps != null) {
            body.put("maxSteps", maxSteps);
        }
        putIfSet(body, "fallbackModel", fallbackModel);
        if (fromThread) {
            body.put("fromThread", true);
        }
        return body;
    }

    /**
     * One history entry as a message on {@code llm.turn-requests}: {@code {role, content, files?}} for text,
     * {@code {role: "assistant", content?, toolCalls}} and {@code {role: "tool", outputs}} for client-side
     * tool calls and their results, {@code {role: "assistant", content, turnId}} for an earlier turn of the thread.
     */
    private static void writeEntry(Conversation.Entry entry, ObjectNode message) {
        if (entry instanceof Conversation.UserText user) {
            message.put("role", "user").put("content", user.text());
            writeFiles(user.files(), message);
        } else if (entry instanceof Conversation.AssistantText assistant) {
            message.put("role", "assistant").put("content", assistant.text());
        } else if (entry instanceof Conversation.EarlierTurn earlier) {
            message.put("role", "assistant").put("content", earlier.text()).put("turnId", earlier.turnId());
        } else if (entry instanceof Conversation.AssistantToolCalls calls) {
            message.put("role", "assistant");
            putIfSet(message, "content", calls.text());
            ArrayNode list = message.putArray("toolCalls");
            calls.calls().forEach(call -> list.addObject().put("callId", call.callId()).put("name", call.name())
                    .set("arguments", call.arguments()));
        } else if (entry instanceof Conversation.ToolOutputs outputs) {
            message.put("role", "tool");
            ArrayNode list = message.putArray("outputs");
            outputs.outputs().forEach(output -> list.addObject().put("callId", output.callId())
                    .put("toolName", output.toolName()).put("text", output.text()).put("success", output.success()));
        } else {
            throw new IllegalStateException("a request's history holds no " + entry);
        }
    }

    private static Conversation.Entry readEntry(JsonNode message) {
        String role = message.path("role").asText();
        if ("tool".equals(role)) {
            List<Conversation.ToolOutput> outputs = new ArrayList<>();
            message.path("outputs").forEach(output -> outputs.add(new Conversation.ToolOutput(
                    output.path("callId").asText(), text(output, "toolName"), output.path("text").asText(),
                    output.path("success").asBoolean(true))));
            return new Conversation.ToolOutputs(outputs);
        }
        if (message.has("toolCalls")) {
            List<Conversation.ToolCall> calls = new ArrayList<>();
            message.get("toolCalls").forEach(call -> calls.add(new Conversation.ToolCall(call.path("callId").asText(),
                    call.path("name").asText(), call.get("arguments"))));
            return new Conversation.AssistantToolCalls(text(message, "content"), calls);
        }
        String content = message.path("content").asText();
        if ("assistant".equals(role) && message.hasNonNull("turnId")) {
            return new Conversation.EarlierTurn(message.get("turnId").asText(), content);
        }
        return "assistant".equals(role) ? new Conversation.AssistantText(content)
                : new Conversation.UserText(content, readFiles(message));
    }

    /** {@code files}: {@code {mediaType, url, filename?}}, the url a data: URL or an https URL. */
    private static void writeFiles(List<Conversation.FilePart> files, ObjectNode json) {
        if (files.isEmpty()) {
            return;
        }
        ArrayNode list = json.putArray("files");
        for (Conversation.FilePart file : files) {
            ObjectNode part = list.addObject().put("mediaType", file.mediaType()).put("url", file.url());
            putIfSet(part, "filename", file.filename());
        }
    }

    private static List<Conversation.FilePart> readFiles(JsonNode json) {
        List<Conversation.FilePart> files = new ArrayList<>();
        json.path("files").forEach(file -> files.add(new Conversation.FilePart(file.path("mediaType").asText(),
                file.path("url").asText(), text(file, "filename"))));
        return files;
    }

    private static void writeTools(List<ToolDefinition> tools, ArrayNode list) {
        for (ToolDefinition tool : tools) {
            ObjectNode json = list.addObject().put("name", tool.name());
            putIfSet(json, "description", tool.description());
            json.set("parameters", tool.parameters());
        }
    }

    private static List<ToolDefinition> readTools(JsonNode list) {
        if (!list.isArray()) {
            return null;
        }
        List<ToolDefinition> tools = new ArrayList<>();
        for (JsonNode tool : list) {
            tools.add(new ToolDefinition(tool.path("name").asText(), text(tool, "description"), tool.get("parameters")));
        }
        return tools;
    }

    private static void putIfSet(ObjectNode json, String field, String value) {
        if (value != null) {
            json.put(field, value);
        }
    }

    /**
     * Reads a request back from {@code llm.turn-requests}, where only an accepted (validated) request is put:
     * the inverse of {@link #toJson}, trusting what it reads. What it cannot read at all throws
     * {@link IllegalArgumentException}.
     */
    public static TurnRequest read(JsonNode json) {
        if (json == null || !json.isObject()) {
            throw new IllegalArgumentException("a turn request is a JSON object, not " + json);
        }
        List<Conversation.Entry> history = new ArrayList<>();
        String prompt = text(json, "prompt");
        List<Conversation.FilePart> files = readFiles(json);
        JsonNode messages = json.path("messages");
        for (int i = 0; i < messages.size(); i++) {
            Conversation.Entry entry = readEntry(messages.get(i));
            if (i == messages.size() - 1 && entry instanceof Conversation.UserText user) {
                prompt = user.text();
                files = user.files();
            } else {
                history.add(entry);
            }
        }
        boolean endsWithResults = !history.isEmpty() && history.get(history.size() - 1) instanceof Conversation.ToolOutputs;
        boolean fromThread = json.path("fromThread").asBoolean(false);
        if (prompt == null && !endsWithResults) {
            throw new IllegalArgumentException("a turn request without 'prompt' or 'messages'");
        }
        List<ToolDefinition> clientTools = readTools(json.path("clientTools"));
        return new TurnRequest(text(json, "provider"), text(json, "model"), text(json, "threadId"), text(json, "system"),
                history, prompt, readTools(json.path("tools")),
                json.path("maxSteps").isInt() ? json.get("maxSteps").asInt() : null, text(json, "fallbackModel"),
                clientTools, fromThread, files);
    }

    private static String text(JsonNode json, String field) {
        JsonNode value = json.get(field);
        return value == null || value.isNull() ? null : value.asText();
    }

    /** Parses and validates a request body; every problem is a 400 that says what to fix. */
    public static TurnRequest parse(String body) {
        JsonNode json = JsonBody.object(body, FIELDS, "{\"prompt\": \"...\"}");
        boolean hasPrompt = json.hasNonNull("prompt");
        boolean hasMessages = json.hasNonNull("messages");
        if (hasPrompt == hasMessages) {
            throw ApiError.badRequest("give either 'prompt' (a string) or 'messages' (a list of {role, content}), not "
                    + (hasPrompt ? "both" : "neither"));
        }
        if (hasMessages && json.has("files")) {
            throw ApiError.badRequest("with 'messages', attach files to a user message ('files' of the message)");
        }
        List<Conversation.Entry> history = new ArrayList<>();
        Conversation.UserText said = hasPrompt
                ? new Conversation.UserText(optional(json, "prompt"), files(json.get("files"), "files"))
                : messages(json.get("messages"), history);
        String threadId = JsonBody.optionalId(json, "threadId");
        // a prompt alone on a named thread continues it; 'messages' is the whole conversation, as the client keeps it
        return new TurnRequest(optional(json, "provider"), optional(json, "model"), threadId,
                optional(json, "system"), history, said.text(), tools(json.get("tools")), maxSteps(json.get("maxSteps")),
                optional(json, "fallbackModel"), null, hasPrompt && threadId != null, said.files());
    }

    /** {@code files} of the native form: {@code {mediaType, data}} (base64) or {@code {url, mediaType?}}, each with a {@code filename?}. */
    private static List<Conversation.FilePart> files(JsonNode files, String where) {
        if (files == null || files.isNull()) {
            return List.of();
        }
        if (!files.isArray()) {
            throw ApiError.badRequest("'" + where + "' must be a list of {mediaType, data} or {url}");
        }
        List<Conversation.FilePart> parts = new ArrayList<>();
        for (int i = 0; i < files.size(); i++) {
            JsonNode file = files.get(i);
            String at = where + "[" + i + "]";
            String mediaType = text(file, "mediaType");
            String filename = text(file, "filename");
            parts.add(file.hasNonNull("data") ? FileParts.fromBase64(at, file.get("data").asText(), mediaType, filename)
                    : FileParts.fromUrl(at, text(file, "url"), mediaType, filename));
        }
        return parts;
    }

    /** Fills {@code history} with all messages but the last, which must be the user's and is returned. */
    private static Conversation.UserText messages(JsonNode messages, List<Conversation.Entry> history) {
        if (!messages.isArray() || messages.isEmpty()) {
            throw ApiError.badRequest("'messages' must be a non-empty list of {role, content}");
        }
        for (int i = 0; i < messages.size(); i++) {
            JsonNode message = messages.get(i);
            String where = "messages[" + i + "]";
            String role = message.path("role").asText("");
            JsonNode content = message.get("content");
            List<Conversation.FilePart> files = "user".equals(role) ? files(message.get("files"), where + ".files")
                    : List.of();
            if (content == null || !content.isTextual() || content.asText().isBlank() && files.isEmpty()) {
                throw ApiError.badRequest(where + ".content must be a non-empty string");
            }
            boolean last = i == messages.size() - 1;
            switch (role) {
                case "user" -> {
                    Conversation.UserText user = new Conversation.UserText(content.asText(), files);
                    if (last) {
                        return user;
                    }
                    history.add(user);
                }
                case "assistant" -> {
                    if (last) {
                        throw ApiError.badRequest("the last message must be the user's: it is the turn's prompt");
                    }
                    history.add(new Conversation.AssistantText(content.asText()));
                }
                default -> throw ApiError.badRequest(where + ".role must be 'user' or 'assistant'");
            }
        }
        throw new IllegalStateException("unreachable: the last message returns or throws");
    }

    private static List<ToolDefinition> tools(JsonNode tools) {
        if (tools == null || tools.isNull()) {
            return null;
        }
        if (!tools.isArray()) {
            throw ApiError.badRequest("'tools' must be a list of {name, description, parameters}");
        }
        List<ToolDefinition> definitions = new ArrayList<>();
        for (int i = 0; i < tools.size(); i++) {
            JsonNode tool = tools.get(i);
            String where = "tools[" + i + "]";
            String name = tool.path("name").asText("");
            if (!TOOL_NAME.matcher(name).matches()) {
                throw ApiError.badRequest(where + ".name must be 1 to 64 letters, digits, '_' or '-'");
            }
            JsonNode schema = tool.has("parameters") ? tool.get("parameters") : tool.get("input_schema");
            if (schema == null || schema.isNull()) {
                ObjectNode empty = Json.MAPPER.createObjectNode().put("type", "object");
                empty.putObject("properties");
                schema = empty;
            } else if (!schema.isObject() || !"object".equals(schema.path("type").asText())) {
                throw ApiError.badRequest(where + ".parameters must be a JSON schema of type object");
            }
            String description = tool.hasNonNull("description") ? tool.get("description").asText() : null;
            definitions.add(new ToolDefinition(name, description, schema));
        }
        return definitions;
    }

    /** {@code maxSteps} of a request body: null when absent, else 1 to {@link #MAX_STEPS_LIMIT}. */
    public static Integer maxSteps(JsonNode value) {
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.canConvertToInt() || !value.isIntegralNumber() || value.asInt() < 1 || value.asInt() > MAX_STEPS_LIMIT) {
            throw ApiError.badRequest("'maxSteps' must be a whole number from 1 to " + MAX_STEPS_LIMIT);
        }
        return value.asInt();
    }

    private static String optional(JsonNode json, String field) {
        return JsonBody.optionalText(json, field);
    }
}
