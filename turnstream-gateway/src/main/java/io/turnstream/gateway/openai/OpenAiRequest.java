package io.turnstream.gateway.openai;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.gateway.http.ApiError;
import io.turnstream.gateway.http.JsonBody;
import io.turnstream.gateway.provider.Conversation;
import io.turnstream.gateway.provider.ToolDefinition;
import io.turnstream.gateway.turn.FileParts;
import io.turnstream.gateway.turn.TurnRequest;
import io.turnstream.model.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * An OpenAI-compatible request ({@code POST /v1/chat/completions} or {@code POST /v1/responses}) as a
 * turn. {@code model} names the provider and model as {@code provider/model} ({@code anthropic/claude-sonnet-4-5},
 * {@code openai/gpt-5}), a provider alone ({@code simulated}), or a model of the default provider. Tools the
 * request declares are client-side. Sampling settings ({@code temperature}, {@code max_tokens}, ...) are accepted
 * and not applied: the gateway's provider settings decide; any other field is a 400.
 *
 * @param model the request's {@code model}, echoed back in the answer
 * @param previousResponseId the Responses request's {@code previous_response_id}, echoed back in the answer; else null
 */
record OpenAiRequest(TurnRequest turn, String model, boolean stream, boolean includeUsage, String previousResponseId) {

    private static final List<String> PROVIDERS = List.of("anthropic", "openai", "openai-chat", "simulated");
    /** The type of a file given as bare base64 {@code file_data}: the one document type the gateway takes. */
    private static final String PDF = "application/pdf";
    private static final Pattern TOOL_NAME = Pattern.compile("[A-Za-z0-9_-]{1,64}");
    /** Accepted so that existing clients work, and not applied. */
    private static final List<String> IGNORED = List.of("temperature", "top_p", "max_tokens", "max_completion_tokens",
            "max_output_tokens", "user", "metadata", "parallel_tool_calls", "store", "seed", "stop",
            "presence_penalty", "frequency_penalty", "reasoning_effort", "reasoning", "truncation", "include",
            "service_tier", "logprobs", "top_logprobs", "n");
    private static final List<String> CHAT_FIELDS = concat(List.of("model", "messages", "tools", "tool_choice",
            "stream", "stream_options"));
    private static final List<String> RESPONSES_FIELDS = concat(List.of("model", "input", "instructions", "tools",
            "tool_choice", "stream", "previous_response_id"));

    /**
     * The response a Responses request continues ({@code previous_response_id}): its thread, and its client-side
     * calls without a result, which the request may answer.
     */
    record Previous(String threadId, List<Conversation.ToolCall> unansweredCalls) {
    }

    Set<String> clientToolNames() {
        return turn.clientTools().stream().map(ToolDefinition::name).collect(Collectors.toSet());
    }

    /** The body of {@code POST /v1/chat/completions}; {@code threadId} from the request's header, or null. */
    static OpenAiRequest chat(String body, String threadId) {
        JsonNode json = JsonBody.object(body, CHAT_FIELDS, "{\"model\": \"...\", \"messages\": [...]}");
        checkCommon(json);
        JsonNode messages = json.get("messages");
        if (messages == null || !messages.isArray() || messages.isEmpty()) {
            throw ApiError.badRequest("'messages' must be a non-empty list of {role, content}");
        }
        OpenAiConversation conversation = new OpenAiConversation();
        for (int i = 0; i < messages.size(); i++) {
            JsonNode message = messages.get(i);
            String where = "messages[" + i + "]";
            String role = message.path("role").asText("");
            switch (role) {
                case "system", "developer" -> conversation.system(text(message.get("content"), where, "text"));
                case "user" -> user(message.get("content"), where, conversation);
                case "assistant" -> {
                    JsonNode content = message.get("content");
                    conversation.assistant(content == null || content.isNull() ? null : text(content, where, "text"),
                            where);
                    JsonNode calls = message.path("tool_calls");
                    for (int c = 0; c < calls.size(); c++) {
                        JsonNode call = calls.get(c);
                        String at = where + ".tool_calls[" + c + "]";
                        conversation.toolCall(call.path("id").asText(null), call.at("/function/name").asText(null),
                                call.at("/function/arguments").asText(null), at);
                    }
                }
                case "tool" -> conversation.toolResult(message.path("tool_call_id").asText(null),
                        text(message.get("content"), where, "text"), where);
                default -> throw ApiError.badRequest(where + ".role must be system, developer, user, assistant or tool");
            }
        }
        List<ToolDefinition> tools = tools(json.get("tools"), true);
        JsonNode options = json.path("stream_options");
        return new OpenAiRequest(turn(json, threadId, conversation.finish(), tools), json.get("model").asText(),
                json.path("stream").asBoolean(false), options.path("include_usage").asBoolean(false), null);
    }

    /**
     * The body of {@code POST /v1/responses}; {@code threadId} from the request's header, or null.
     *
     * @param previous finds the response {@code previous_response_id} names (404 or 400 when it cannot be continued)
     */
    static OpenAiRequest responses(String body, String threadId, Function<String, Previous> previous) {
        JsonNode json = JsonBody.object(body, RESPONSES_FIELDS, "{\"model\": \"...\", \"input\": \"...\"}");
        checkCommon(json);
        OpenAiConversation conversation = new OpenAiConversation();
        Previous continued = null;
        String previousResponseId = JsonBody.optionalText(json, "previous_response_id");
        if (previousResponseId != null) {
            continued = previous.apply(previousResponseId);
            if (threadId != null && !threadId.equals(continued.threadId())) {
                throw ApiError.badRequest("previous_response_id is a response of thread " + continued.threadId()
                        + ", not of the thread the " + OpenAiApi.THREAD_ID_HEADER + " header names");
            }
            threadId = continued.threadId();
            conversation.answering(continued.unansweredCalls());
        }
        if (json.hasNonNull("instructions")) {
            conversation.system(JsonBody.optionalText(json, "instructions"));
        }
        JsonNode input = json.get("input");
        if (input != null && input.isTextual()) {
            conversation.user(input.asText(), List.of(), "input");
        } else if (input != null && input.isArray() && !input.isEmpty()) {
            for (int i = 0; i < input.size(); i++) {
                inputItem(input.get(i), "input[" + i + "]", conversation);
            }
        } else {
            throw ApiError.badRequest("'input' must be a string or a non-empty list of input items");
        }
        List<ToolDefinition> tools = tools(json.get("tools"), false);
        TurnRequest turn = turn(json, threadId, conversation.finish(), tools);
        return new OpenAiRequest(continued == null ? turn : turn.inThread(threadId, true), json.get("model").asText(),
                json.path("stream").asBoolean(false), true, previousResponseId);
    }

    private static void inputItem(JsonNode item, String where, OpenAiConversation conversation) {
        String type = item.path("type").asText("message");
        switch (type) {
            case "message" -> {
                String role = item.path("role").asText("");
                if ("user".equals(role)) {
                    user(item.get("content"), where, conversation);
                    return;
                }
                String text = text(item.get("content"), where, "input_text or output_text");
                switch (role) {
                    case "system", "developer" -> conversation.system(text);
                    case "assistant" -> conversation.assistant(text, where);
                    default -> throw ApiError.badRequest(where + ".role must be system, developer, user or assistant");
                }
            }
            case "function_call" -> conversation.toolCall(item.path("call_id").asText(null),
                    item.path("name").asText(null), item.path("arguments").asText(null), where);
            case "function_call_output" -> {
                JsonNode output = item.get("output");
                conversation.toolResult(item.path("call_id").asText(null),
                        output == null || output.isNull() ? "" : output.isTextual() ? output.asText()
                                : text(output, where + ".output", "input_text"), where);
            }
            default -> throw ApiError.badRequest(where + ".type '" + type + "' is not supported; the gateway takes "
                    + "message, function_call and function_call_output items");
        }
    }

    private static void checkCommon(JsonNode json) {
        if (!json.hasNonNull("model") || !json.get("model").isTextual() || json.get("model").asText().isBlank()) {
            throw ApiError.badRequest("'model' is required: provider/model (such as anthropic/claude-sonnet-4-5), "
                    + "a provider (such as simulated), or a model of the gateway's default provider");
        }
        JsonNode stream = json.get("stream");
        if (stream != null && !stream.isNull() && !stream.isBoolean()) {
            throw ApiError.badRequest("'stream' must be true or false");
        }
        JsonNode n = json.get("n");
        if (n != null && !n.isNull() && n.asInt() != 1) {
            throw ApiError.badRequest("'n' must be 1: a turn has one answer");
        }
        JsonNode choice = json.get("tool_choice");
        if (choice != null && !choice.isNull() && !"auto".equals(choice.asText())) {
            throw ApiError.badRequest("'tool_choice' must be \"auto\" (or absent): the model chooses its tools");
        }
    }

    private static TurnRequest turn(JsonNode json, String threadId, OpenAiConversation.Parsed said,
                                    List<ToolDefinition> clientTools) {
        String model = json.get("model").asText();
        String provider = null;
        int slash = model.indexOf('/');
        if (slash > 0 && PROVIDERS.contains(model.substring(0, slash))) {
            provider = model.substring(0, slash);
            model = model.substring(slash + 1);
        } else if (PROVIDERS.contains(model)) {
            provider = model;
            model = null;
        }
        return new TurnRequest(provider, model, threadId, said.system(), said.history(), said.prompt(), null, null,
                null, clientTools, false, said.files());
    }

    /** Chat's {@code {type: "function", function: {name, ...}}} or the Responses' {@code {type: "function", name, ...}}. */
    private static List<ToolDefinition> tools(JsonNode tools, boolean nested) {
        List<ToolDefinition> definitions = new ArrayList<>();
        if (tools == null || tools.isNull()) {
            return definitions;
        }
        if (!tools.isArray()) {
            throw ApiError.badRequest("'tools' must be a list of function tools");
        }
        for (int i = 0; i < tools.size(); i++) {
            JsonNode tool = tools.get(i);
            String where = "tools[" + i + "]";
            if (!"function".equals(tool.path("type").asText())) {
                throw ApiError.badRequest(where + ".type must be \"function\": the gateway runs no hosted tools");
            }
            JsonNode function = nested ? tool.path("function") : tool;
            String name = function.path("name").asText("");
            if (!TOOL_NAME.matcher(name).matches()) {
                throw ApiError.badRequest(where + " needs a name of 1 to 64 letters, digits, '_' or '-'");
            }
            JsonNode schema = function.get("parameters");
            if (schema == null || schema.isNull()) {
                schema = Json.MAPPER.createObjectNode().put("type", "object");
            } else if (!schema.isObject()) {
                throw ApiError.badRequest(where + " parameters must be a JSON schema object");
            }
            definitions.add(new ToolDefinition(name, function.path("description").asText(null), schema));
        }
        return definitions;
    }

    /**
     * A user message's content: a string, or a list of text and file parts of either API (Chat's {@code text},
     * {@code image_url} and {@code file}; the Responses' {@code input_text}, {@code input_image} and
     * {@code input_file}). A file's {@code file_data} is a data: URL, or base64 data of a PDF.
     */
    private static void user(JsonNode content, String where, OpenAiConversation conversation) {
        if (content == null || !content.isArray()) {
            conversation.user(text(content, where, "text"), List.of(), where);
            return;
        }
        StringBuilder text = new StringBuilder();
        List<Conversation.FilePart> files = new ArrayList<>();
        for (int i = 0; i < content.size(); i++) {
            JsonNode part = content.get(i);
            String at = where + ".content[" + i + "]";
            String type = part.path("type").asText();
            JsonNode file = "file".equals(type) ? part.path("file") : part;
            if (file.hasNonNull("file_id") || part.path("image_url").hasNonNull("file_id")) {
                throw ApiError.badRequest(at + " names a file id: the gateway keeps no files; send the file's data");
            }
            switch (type) {
                case "text", "input_text" -> text.append(part.path("text").asText(""));
                case "image_url" -> files.add(FileParts.fromUrl(at, part.path("image_url").path("url").asText(null),
                        null, null));
                case "input_image" -> files.add(FileParts.fromUrl(at, part.path("image_url").asText(null), null, null));
                case "file", "input_file" -> {
                    String filename = file.path("filename").asText(null);
                    String data = file.path("file_data").asText(null);
                    if (data == null) {
                        files.add(FileParts.fromUrl(at, file.path("file_url").asText(null), PDF, filename));
                    } else if (data.regionMatches(true, 0, "data:", 0, 5)) {
                        files.add(FileParts.fromUrl(at, data, null, filename));
                    } else {
                        files.add(FileParts.fromBase64(at, data, PDF, filename));
                    }
                }
                default -> throw ApiError.badRequest(at + " is of type '" + type + "'; the gateway takes text, "
                        + "image_url and file parts (input_text, input_image and input_file in the Responses API)");
            }
        }
        conversation.user(text.toString(), files, where);
    }

    /** A content field: a string, or a list of text parts ({@code type} one of {@code partTypes}) joined. */
    private static String text(JsonNode content, String where, String partTypes) {
        if (content != null && content.isTextual()) {
            return content.asText();
        }
        if (content != null && content.isArray()) {
            StringBuilder text = new StringBuilder();
            for (JsonNode part : content) {
                String type = part.path("type").asText();
                if (!part.path("text").isTextual() || !(type.equals("text") || type.endsWith("_text"))) {
                    throw ApiError.badRequest(where + ".content holds a part of type '" + type + "'; the gateway takes "
                            + partTypes + " parts only");
                }
                text.append(part.get("text").asText());
            }
            return text.toString();
        }
        throw ApiError.badRequest(where + ".content must be a string or a list of " + partTypes + " parts");
    }

    private static List<String> concat(List<String> fields) {
        List<String> all = new ArrayList<>(fields);
        all.addAll(IGNORED);
        return List.copyOf(all);
    }
}
