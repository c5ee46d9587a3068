package io.turnstream.gateway.turn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.turnstream.gateway.http.ApiError;
import io.turnstream.model.Json;
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

    @Test
    void aRecordThatIsNoRequestAtAllCannotBeRead() {
        assertThatThrownBy(() -> TurnRequest.read(Json.MAPPER.createObjectNode().put("model", "m")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("without 'prompt' or 'messages'");
    }
}
