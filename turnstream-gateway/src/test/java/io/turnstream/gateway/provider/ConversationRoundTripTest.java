package io.turnstream.gateway.provider;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.model.Json;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A step's native assistant content and its tool results go back to the provider in the next
 * request exactly as each protocol expects, signatures and encrypted reasoning untouched.
 */
class ConversationRoundTripTest {

    private static RecordedStreams streams;

    @BeforeAll
    static void startServer() {
        streams = new RecordedStreams();
    }

    @AfterAll
    static void stopServer() {
        streams.close();
    }

    @Test
    void anthropicSendsBackItsBlocksAndToolResults() {
        StepOutcome first = streams.play("anthropic-docs-tool-use.sse").outcome();
        ToolCallRequest call = first.toolCalls().get(0);

        RecordedStreams.Played next = streams.play("anthropic-next", RecordedStreams.bytes("anthropic-docs-basic.sse"),
                new AnthropicMessagesAdapter(), nextStep(first, call, "15 degrees"));

        JsonNode request = next.request();
        assertThat(request.get("stream").asBoolean()).isTrue();
        assertThat(request.at("/system/0/text").asText()).isEqualTo("Be brief.");
        assertThat(request.get("max_tokens").asInt()).isEqualTo(1024);
        assertThat(request.at("/tools/0/name").asText()).isEqualTo(InstalledTools.ALL.get(0).name());
        assertThat(request.at("/tools/0/input_schema")).isEqualTo(InstalledTools.ALL.get(0).parameters());
        assertThat(request.at("/messages/1/role").asText()).isEqualTo("assistant");
        assertThat(request.at("/messages/1/content")).isEqualTo(first.assistantContent());
        JsonNode result = request.at("/messages/2/content/0");
        assertThat(result.get("type").asText()).isEqualTo("tool_result");
        assertThat(result.get("tool_use_id").asText()).isEqualTo("toolu_01T1x1fJ34qAmk2tNTrN7Up6");
        assertThat(result.get("content").asText()).isEqualTo("15 degrees");
        assertThat(result.get("is_error").asBoolean()).isFalse();
        assertThat(next.requestHeaders().getFirst("x-api-key")).isEqualTo("test-key");
        assertThat(next.requestHeaders().getFirst("anthropic-version")).isEqualTo(AnthropicMessagesAdapter.API_VERSION);
    }

    @Test
    void anthropicThinkingGoesBackWithItsSignature() {
        StepOutcome first = streams.play("vercel-anthropic-thinking-signature.sse").outcome();

        RecordedStreams.Played next = streams.play("anthropic-thinking-next",
                RecordedStreams.bytes("anthropic-docs-basic.sse"), new AnthropicMessagesAdapter(),
                new ModelRequest("m", null, List.of(new Conversation.UserText("925 / 5?"),
                        new Conversation.AssistantNative(first.assistantContent()),
                        new Conversation.UserText("and times 2?")), List.of(), 1024, null));

        JsonNode thinking = next.request().at("/messages/1/content/0");
        assertThat(thinking.get("type").asText()).isEqualTo("thinking");
        assertThat(thinking.get("signature")).isEqualTo(first.assistantContent().get(0).get("signature"));
        assertThat(next.request().has("tools")).isFalse();
    }

    @Test
    void responsesSendsBackOutputItemsAndFunctionCallOutputs() {
        StepOutcome first = streams.play("vercel-responses-reasoning-fc-part1.sse").outcome();
        ToolCallRequest call = first.toolCalls().get(0);

        RecordedStreams.Played next = streams.play("responses-next",
                RecordedStreams.bytes("vercel-responses-reasoning-fc-part4.sse"), new OpenAiResponsesAdapter(),
                nextStep(first, call, "19"));

        JsonNode input = next.request().get("input");
        assertThat(next.request().get("instructions").asText()).isEqualTo("Be brief.");
        assertThat(input.get(0).get("role").asText()).isEqualTo("user");
        assertThat(input.get(1)).isEqualTo(first.assistantContent().get(0));
        assertThat(input.get(1).get("encrypted_content").asText()).startsWith("gAAAAABpPDIVOKrsHNZ0");
        assertThat(input.get(2).get("type").asText()).isEqualTo("function_call");
        assertThat(input.get(3).get("type").asText()).isEqualTo("function_call_output");
        assertThat(input.get(3).get("call_id").asText()).isEqualTo("call_AB6AaRZ1FYZB2RwS6A5vbdqn");
        assertThat(input.get(3).get("output").asText()).isEqualTo("19");
        assertThat(next.request().at("/tools/0/type").asText()).isEqualTo("function");
        assertThat(next.requestHeaders().getFirst("authorization")).isEqualTo("Bearer test-key");
    }

    @Test
    void chatSendsBackTheAssistantToolCallsAndToolMessages() {
        StepOutcome first = streams.play("openai-chat-tool-call.sse").outcome();
        ToolCallRequest call = first.toolCalls().get(0);

        RecordedStreams.Played next = streams.play("chat-next", RecordedStreams.bytes("openai-chat-text.sse"),
                new OpenAiChatAdapter(), nextStep(first, call, "{\"temperature\": 12}"));

        JsonNode messages = next.request().get("messages");
        assertThat(messages.get(0).get("role").asText()).isEqualTo("system");
        assertThat(messages.get(2).get("role").asText()).isEqualTo("assistant");
        assertThat(messages.get(2).at("/tool_calls/0/function/arguments").asText())
                .isEqualTo("{\"city\":\"Edinburgh\",\"country\":\"UK\",\"units\":\"c\"}");
        assertThat(messages.get(3).get("role").asText()).isEqualTo("tool");
        assertThat(messages.get(3).get("tool_call_id").asText()).isEqualTo("call_c91SqDXlYFuETYv8mUHzz6pp");
        assertThat(next.request().at("/stream_options/include_usage").asBoolean()).isTrue();
        assertThat(next.request().at("/tools/0/function/name").asText()).isEqualTo(InstalledTools.ALL.get(0).name());
    }

    /** A user message's image and PDF reach each provider in its own content parts, the files before the text. */
    @Test
    void filesGoToEachProviderInItsWireFormat() {
        Conversation.FilePart png = new Conversation.FilePart("image/png", "data:image/png;base64," + PNG, null);
        Conversation.FilePart pdf = new Conversation.FilePart("application/pdf", "data:application/pdf;base64," + PDF,
                "report.pdf");
        Conversation.FilePart linked = new Conversation.FilePart("image/*", "https://example.com/cat.jpg", null);
        ModelRequest request = new ModelRequest("m", null, List.of(new Conversation.UserText("What do these show?",
                List.of(png, pdf, linked))), List.of(), 1024, null);

        JsonNode anthropic = streams.play("files-anthropic", RecordedStreams.bytes("anthropic-docs-basic.sse"),
                new AnthropicMessagesAdapter(), request).request().at("/messages/0/content");
        assertThat(anthropic.get(0)).isEqualTo(json("""
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "%s"}}""".formatted(PNG)));
        assertThat(anthropic.get(1)).isEqualTo(json("""
                {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "%s"},
                 "title": "report.pdf"}""".formatted(PDF)));
        assertThat(anthropic.get(2)).isEqualTo(json("""
                {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}}"""));
        assertThat(anthropic.get(3).get("text").asText()).isEqualTo("What do these show?");

        JsonNode chat = streams.play("files-chat", RecordedStreams.bytes("openai-chat-text.sse"),
                new OpenAiChatAdapter(), request).request().at("/messages/0/content");
        assertThat(chat.get(0)).isEqualTo(json("""
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,%s"}}""".formatted(PNG)));
        assertThat(chat.get(1)).isEqualTo(json("""
                {"type": "file", "file": {"filename": "report.pdf", "file_data": "data:application/pdf;base64,%s"}}"""
                .formatted(PDF)));
        assertThat(chat.get(2).at("/image_url/url").asText()).isEqualTo("https://example.com/cat.jpg");
        assertThat(chat.get(3)).isEqualTo(json("{\"type\": \"text\", \"text\": \"What do these show?\"}"));

        JsonNode responses = streams.play("files-responses",
                RecordedStreams.bytes("vercel-responses-reasoning-fc-part4.sse"), new OpenAiResponsesAdapter(), request)
                .request().at("/input/0/content");
        assertThat(responses.get(0)).isEqualTo(json("""
                {"type": "input_image", "image_url": "data:image/png;base64,%s"}""".formatted(PNG)));
        assertThat(responses.get(1)).isEqualTo(json("""
                {"type": "input_file", "filename": "report.pdf", "file_data": "data:application/pdf;base64,%s"}"""
                .formatted(PDF)));
        assertThat(responses.get(3)).isEqualTo(json("""
                {"type": "input_text", "text": "What do these show?"}"""));
    }

    /** A 1x1 PNG and the start of a PDF, base64. */
    static final String PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    static final String PDF = "JVBERi0xLjQKJcfsj6IK";

    private static JsonNode json(String text) {
        return Json.fromString(text, JsonNode.class);
    }

    private static ModelRequest nextStep(StepOutcome first, ToolCallRequest call, String output) {
        return new ModelRequest("test-model", "Be brief.", List.of(
                new Conversation.UserText("What is the weather?"),
                new Conversation.AssistantNative(first.assistantContent()),
                new Conversation.ToolOutputs(List.of(new Conversation.ToolOutput(call.callId(), call.name(), output, true)))),
                InstalledTools.ALL, 1024, null);
    }
}
