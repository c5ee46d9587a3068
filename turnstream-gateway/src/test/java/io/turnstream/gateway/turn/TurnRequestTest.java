package io.turnstream.gateway.turn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.turnstream.gateway.http.ApiError;
import io.turnstream.gateway.provider.Conversation;
import io.turnstream.model.Json;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A request is validated where it is accepted, and read back from {@code llm.turn-requests} as written. */
class TurnRequestTest {

    @Test
    void whatIsWrittenIsReadBackEqual() {
        TurnRequest accepted = TurnRequest.parse("""
                {"provider": "simulated", "model": "m", "threadId": "t-1", "system": "Be brief.",
                 "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"},
                              {"role": "user", "content": "List the files"}],
                 "tools": [{"name": "list_files", "description": "Lists", "parameters": {"type": "object"}}],
                 "maxSteps": 3, "fallbackModel": "f"}""");

        assertThat(TurnRequest.read(accepted.toJson())).isEqualTo(accepted);
        TurnRequest minimal = TurnRequest.prompt(null, null, "Hello");
        assertThat(TurnRequest.read(minimal.toJson())).isEqualTo(minimal);
    }

    /** What the accepting gateway let through is not judged again by the one that runs it. */
    @Test
    void readingTrustsWhatWasAccepted() {
        TurnRequest accepted = new TurnRequest(null, null, "chat-1", "  ", List.of(), "Hi", null, null, null);

        assertThatThrownBy(() -> TurnRequest.parse(Json.toString(accepted.toJson()))).isInstanceOf(ApiError.class);
        assertThat(TurnRequest.read(accepted.toJson())).isEqualTo(accepted);
    }

    /** The native form's files, base64 or by URL, on the prompt or on a user message, survive the record. */
    @Test
    void filesAreAcceptedAndReadBackWithTheirMessages() {
        TurnRequest withPrompt = TurnRequest.parse("""
                {"prompt": "What is this?", "files": [{"mediaType": "image/png", "data": "%s", "filename": "dot.png"},
                 {"url": "https://example.com/cat.jpg", "mediaType": "image/jpeg"}]}""".formatted(PNG));

        assertThat(withPrompt.files()).containsExactly(
                new Conversation.FilePart("image/png", "data:image/png;base64," + PNG, "dot.png"),
                new Conversation.FilePart("image/jpeg", "https://example.com/cat.jpg", null));
        assertThat(withPrompt.conversation()).containsExactly(new Conversation.UserText("What is this?",
                withPrompt.files()));
        assertThat(TurnRequest.read(withPrompt.toJson())).isEqualTo(withPrompt);

        TurnRequest inMessages = TurnRequest.parse("""
                {"messages": [{"role": "user", "content": "Read it", "files": [{"url": "data:application/pdf;base64,%s"}]},
                              {"role": "assistant", "content": "Done"},
                              {"role": "user", "content": "And this?", "files": [{"mediaType": "image/png", "data": "%s"}]}]}"""
                .formatted(PDF, PNG));

        assertThat(inMessages.history().get(0)).isEqualTo(new Conversation.UserText("Read it", List.of(
                new Conversation.FilePart("application/pdf", "data:application/pdf;base64," + PDF, null))));
        assertThat(inMessages.files()).extracting(Conversation.FilePart::mediaType).containsExactly("image/png");
        assertThat(TurnRequest.read(inMessages.toJson())).isEqualTo(inMessages);
        assertThat(inMessages.files().get(0).toString()).as("no file data in a log line").doesNotContain(PNG);
    }

    @Test
    void aFileTheProvidersCannotTakeIsA400ThatSaysWhy() {
        assertRefused("{\"prompt\": \"x\", \"files\": [{\"mediaType\": \"audio/wav\", \"data\": \"AAAA\"}]}",
                "files[0] has media type 'audio/wav'; the gateway takes image/png");
        assertRefused("{\"prompt\": \"x\", \"files\": [{\"mediaType\": \"image/png\", \"data\": \"not base64!\"}]}",
                "files[0] is not valid base64");
        assertRefused("{\"prompt\": \"x\", \"files\": [{\"mediaType\": \"image/png\", \"data\": \""
                + Base64.getEncoder().encodeToString(new byte[FileParts.MAX_FILE_BYTES + 1]) + "\"}]}",
                "files[0] is " + (FileParts.MAX_FILE_BYTES + 1) + " bytes; a file may hold at most");
        assertRefused("{\"prompt\": \"x\", \"files\": [{\"url\": \"https://example.com/a.pdf\", "
                + "\"mediaType\": \"application/pdf\"}]}", "send a document inline");
        assertRefused("{\"prompt\": \"x\", \"files\": [{\"url\": \"file:///etc/passwd\"}]}",
                "must be a data: URL (base64) or an https URL");
        assertRefused("{\"prompt\": \"x\", \"files\": [{\"mediaType\": \"image/gif\", \"url\": \"data:image/png;base64,"
                + PNG + "\"}]}", "says media type image/gif but its data: URL says image/png");
        assertRefused("{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"files\": []}",
                "attach files to a user message");
    }

    private static void assertRefused(String body, String message) {
        assertThatThrownBy(() -> TurnRequest.parse(body)).isInstanceOf(ApiError.class).hasMessageContaining(message)
                .extracting(e -> ((ApiError) e).status()).isEqualTo(400);
    }

    static final String PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    static final String PDF = "JVBERi0xLjQKJcfsj6IK";

    @Test
    void aRecordThatIsNoRequestAtAllCannotBeRead() {
        assertThatThrownBy(() -> TurnRequest.read(Json.MAPPER.createObjectNode().put("model", "m")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("without 'prompt' or 'messages'");
    }
}
