package io.turnstream.gateway.chat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.turnstream.gateway.http.ApiError;
import io.turnstream.gateway.provider.Conversation;
import io.turnstream.gateway.turn.TurnRequest;
import java.util.List;
import org.junit.jupiter.api.Test;

/** useChat's file parts ({@code {type: "file", mediaType, url, filename?}}) travel with their user messages. */
class ChatRequestTest {

    private static final String PNG = "data:image/png;base64,iVBORw0KGgo=";

    @Test
    void fileKeepsItsMessageInTheHistoryAndOnThePrompt() {
        TurnRequest turn = ChatRequest.parse("""
                {"id": "chat-1", "trigger": "submit-message", "messages": [
                  {"id": "u-1", "role": "user", "parts": [{"type": "file", "mediaType": "image/png", "url": "%s",
                   "filename": "dot.png"}, {"type": "text", "text": "What is this?"}]},
                  {"id": "a-1", "role": "assistant", "parts": [{"type": "text", "text": "A dot."}]},
                  {"id": "u-2", "role": "user", "parts": [{"type": "file", "mediaType": "image/png", "url": "%s"}]}]}"""
                .formatted(PNG, PNG));

        assertThat(turn.history().get(0)).isEqualTo(new Conversation.UserText("What is this?",
                List.of(new Conversation.FilePart("image/png", PNG, "dot.png"))));
        assertThat(turn.prompt()).as("a message of a file alone").isEmpty();
        assertThat(turn.files()).containsExactly(new Conversation.FilePart("image/png", PNG, null));
        assertThat(TurnRequest.read(turn.toJson())).isEqualTo(turn);
    }

    @Test
    void aFileThatCannotGoIsA400NamingItsPart() {
        assertThatThrownBy(() -> ChatRequest.parse("""
                {"id": "chat-1", "message": {"id": "u-1", "role": "user", "parts": [{"type": "text", "text": "x"},
                 {"type": "file", "mediaType": "text/html", "url": "data:text/html;base64,PGI+"}]}}"""))
                .isInstanceOf(ApiError.class).hasMessageContaining("messages[0].parts[1] has media type 'text/html'");
        assertThatThrownBy(() -> ChatRequest.parse("""
                {"id": "chat-1", "message": {"id": "u-1", "role": "user", "parts": []}}"""))
                .isInstanceOf(ApiError.class).hasMessageContaining("has no text and no file");
    }
}
