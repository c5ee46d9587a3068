package io.turnstream.gateway.openai;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.turnstream.gateway.http.ApiError;
import io.turnstream.gateway.provider.Conversation;
import io.turnstream.gateway.turn.TurnRequest;
import io.turnstream.model.Json;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** OpenAI-compatible bodies become turns; the conversation survives {@code llm.turn-requests} whole. */
class OpenAiRequestTest {

    private static final Function<String, OpenAiRequest.Previous> NO_PREVIOUS = id -> {
        throw new AssertionError("no previous response");
    };

    private static final String TOOLS = """
            [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]""";

    @Test
    void aChatCarryingAClientToolsResultContinuesWithoutAPrompt() {
        OpenAiRequest request = OpenAiRequest.chat("""
                {"model": "anthropic/claude-sonnet-4-5", "temperature": 0.2, "tools": %s, "stream": true,
                 "stream_options": {"include_usage": true},
                 "messages": [{"role": "system", "content": "Be brief."},
                              {"role": "user", "content": [{"type": "text", "text": "Weather in Oslo?"}]},
                              {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
                               "function": {"name": "get_weather", "arguments": "{\\"city\\":\\"Oslo\\"}"}}]},
                              {"role": "tool", "tool_call_id": "call_1", "content": "4 degrees"}]}""".formatted(TOOLS),
                "thread-1");

        TurnRequest turn = request.turn();
        assertThat(turn.provider()).isEqualTo("anthropic");
        assertThat(turn.model()).isEqualTo("claude-sonnet-4-5");
        assertThat(turn.threadId()).isEqualTo("thread-1");
        assertThat(turn.system()).isEqualTo("Be brief.");
        assertThat(turn.prompt()).isNull();
        assertThat(turn.history()).containsExactly(new Conversation.UserText("Weather in Oslo?"),
                new Conversation.AssistantToolCalls(null, List.of(new Conversation.ToolCall("call_1", "get_weather",
                        Json.MAPPER.createObjectNode().put("city", "Oslo")))),
                new Conversation.ToolOutputs(List.of(new Conversation.ToolOutput("call_1", "get_weather", "4 degrees",
                        true))));
        assertThat(request.clientToolNames()).containsExactly("get_weather");
        assertThat(request.stream()).isTrue();
        assertThat(request.includeUsage()).isTrue();
        assertThat(TurnRequest.read(turn.toJson())).as("as the running gateway reads it").isEqualTo(turn);
    }

    @Test
    void responsesInputItemsBecomeTheSameConversation() {
        OpenAiRequest request = OpenAiRequest.responses("""
                {"model": "simulated", "instructions": "Be brief.", "tools": [{"type": "function", "name": "get_weather"}],
                 "input": [{"role": "user", "content": "Weather in Oslo?"},
                           {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Checking."}]},
                           {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{}"},
                           {"type": "function_call_output", "call_id": "call_1", "output": "4 degrees"}]}""", null, NO_PREVIOUS);

        TurnRequest turn = request.turn();
        assertThat(turn.provider()).isEqualTo("simulated");
        assertThat(turn.model()).isNull();
        assertThat(turn.history()).hasSize(3);
        assertThat(turn.history().get(1)).isEqualTo(new Conversation.AssistantToolCalls("Checking.",
                List.of(new Conversation.ToolCall("call_1", "get_weather", Json.MAPPER.createObjectNode()))));
        assertThat(TurnRequest.read(turn.toJson())).isEqualTo(turn);
        assertThat(OpenAiRequest.responses("{\"model\": \"gpt-5\", \"input\": \"Hi\"}", null, NO_PREVIOUS).turn())
                .as("a model of the default provider").extracting(TurnRequest::provider, TurnRequest::model,
                        TurnRequest::prompt).containsExactly(null, "gpt-5", "Hi");
    }

    /**
     * {@code previous_response_id}: the request continues that response's thread with only what it adds, here the
     * result of the client-side call the response made (which the thread holds, not this request).
     */
    @Test
    void aResponseThatContinuesThePreviousOneSendsOnlyWhatIsNew() {
        OpenAiRequest request = OpenAiRequest.responses("""
                {"model": "simulated", "previous_response_id": "turn-1",
                 "input": [{"type": "function_call_output", "call_id": "call_1", "output": "4 degrees"}]}""", null,
                id -> new OpenAiRequest.Previous("thread-of-" + id,
                        List.of(new Conversation.ToolCall("call_1", "get_weather", Json.MAPPER.createObjectNode()))));

        TurnRequest turn = request.turn();
        assertThat(turn.fromThread()).as("the conversation comes from the thread").isTrue();
        assertThat(turn.threadId()).isEqualTo("thread-of-turn-1");
        assertThat(turn.prompt()).isNull();
        assertThat(turn.history()).containsExactly(new Conversation.ToolOutputs(
                List.of(new Conversation.ToolOutput("call_1", "get_weather", "4 degrees", true))));
        assertThat(TurnRequest.read(turn.toJson())).as("as the running gateway reads it").isEqualTo(turn);
        assertThatThrownBy(() -> OpenAiRequest.responses("""
                {"model": "simulated", "previous_response_id": "turn-1", "input": "Hi"}""", "another-thread",
                id -> new OpenAiRequest.Previous("thread-1", List.of())))
                .isInstanceOf(ApiError.class).hasMessageContaining("not of the thread");
    }

    /** Chat's image_url and file parts, and the Responses' input_image and input_file, become the prompt's files. */
    @Test
    void filePartsOfEitherApiBecomeThePromptsFilesAndSurviveTheRecord() {
        String png = "data:image/png;base64,iVBORw0KGgo=";
        String pdf = "data:application/pdf;base64,JVBERi0xLjQK";
        OpenAiRequest chat = OpenAiRequest.chat("""
                {"model": "simulated", "messages": [{"role": "user", "content": [
                  {"type": "text", "text": "Compare"},
                  {"type": "image_url", "image_url": {"url": "%s", "detail": "low"}},
                  {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}},
                  {"type": "file", "file": {"filename": "a.pdf", "file_data": "%s"}},
                  {"type": "file", "file": {"file_data": "JVBERi0xLjQK"}}]}]}""".formatted(png, pdf), null);

        assertThat(chat.turn().prompt()).isEqualTo("Compare");
        assertThat(chat.turn().files()).containsExactly(new Conversation.FilePart("image/png", png, null),
                new Conversation.FilePart("image/*", "https://example.com/cat.jpg", null),
                new Conversation.FilePart("application/pdf", pdf, "a.pdf"),
                new Conversation.FilePart("application/pdf", pdf, null));
        assertThat(TurnRequest.read(chat.turn().toJson())).isEqualTo(chat.turn());

        OpenAiRequest responses = OpenAiRequest.responses("""
                {"model": "simulated", "input": [{"role": "user", "content": [
                  {"type": "input_image", "image_url": "%s"},
                  {"type": "input_file", "filename": "a.pdf", "file_data": "%s"}]}]}""".formatted(png, pdf),
                null, NO_PREVIOUS);

        assertThat(responses.turn().prompt()).as("files without text").isEmpty();
        assertThat(responses.turn().files()).containsExactly(new Conversation.FilePart("image/png", png, null),
                new Conversation.FilePart("application/pdf", pdf, "a.pdf"));
        assertThat(TurnRequest.read(responses.turn().toJson())).isEqualTo(responses.turn());
    }

    @Test
    void aResponsesAnswerNamesTheResponseItContinued() {
        OpenAiRequest request = OpenAiRequest.responses("""
                {"model": "simulated", "previous_response_id": "turn-1", "input": "And then?"}""", null,
                id -> new OpenAiRequest.Previous("thread-1", List.of()));
        TurnAnswer answer = new TurnAnswer("turn-2", List.of(), List.of(), null);

        assertThat(request.previousResponseId()).isEqualTo("turn-1");
        assertThat(Responses.response(answer, "simulated", request.previousResponseId(), 0)
                .get("previous_response_id").asText()).isEqualTo("turn-1");
        assertThat(Responses.response(answer, "simulated", null, 0).get("previous_response_id").isNull()).isTrue();
    }

    @Test
    void whatTheGatewayCannotDoIsA400ThatSaysSo() {
        assertRefused("{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]}", "'model' is required");
        assertRefused("{\"model\": \"simulated\", \"messages\": []}", "'messages' must be a non-empty list");
        assertRefused("{\"model\": \"simulated\", \"response_format\": {}, \"messages\": [{\"role\": \"user\", "
                + "\"content\": \"Hi\"}]}", "unknown field 'response_format'");
        assertRefused("""
                {"model": "simulated", "messages": [{"role": "user", "content": "Hi"},
                 {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{}"}}]},
                 {"role": "user", "content": "And?"}]}""", "tool call 'c1' has no result");
        assertRefused("""
                {"model": "simulated", "messages": [{"role": "tool", "tool_call_id": "c9", "content": "x"}]}""",
                "answers call 'c9', which no earlier assistant message made");
        assertRefused("""
                {"model": "simulated", "messages": [{"role": "user", "content": [{"type": "image_url"}]}]}""",
                "messages[0].content[0] needs the file");
        assertRefused("""
                {"model": "simulated", "messages": [{"role": "user", "content": [{"type": "input_audio"}]}]}""",
                "messages[0].content[0] is of type 'input_audio'");
        assertRefused("""
                {"model": "simulated", "messages": [{"role": "user", "content": [{"type": "file",
                 "file": {"file_id": "file-abc"}}]}]}""", "names a file id: the gateway keeps no files");
        assertRefused("""
                {"model": "simulated", "messages": [{"role": "user", "content": [{"type": "image_url",
                 "image_url": {"url": "data:image/tiff;base64,AAAA"}}]}]}""", "media type 'image/tiff'");
        assertRefused("""
                {"model": "simulated", "tools": [{"type": "web_search"}], "messages": [{"role": "user", "content": "Hi"}]}""",
                "runs no hosted tools");
    }

    private static void assertRefused(String body, String message) {
        assertThatThrownBy(() -> OpenAiRequest.chat(body, null)).isInstanceOf(ApiError.class)
                .hasMessageContaining(message).extracting(e -> ((ApiError) e).status()).isEqualTo(400);
    }
}
