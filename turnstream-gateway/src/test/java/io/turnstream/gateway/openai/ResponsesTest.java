package io.turnstream.gateway.openai;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UiPayloadType;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The Responses API's whole response of an ended turn, without a broker. */
class ResponsesTest {

    @Test
    void aFailedTurnsResponseSaysWhyAndWhatItsStepsUsed() {
        UITurnEvent failed = new UITurnEvent(UiPayloadType.TURN_ERROR, "turn-1", "thread-1", null, null, null,
                new UITurnEvent.Usage(1200, 80, 1280, 1000L, null, 30L, 0.004), ErrorInfo.of("overloaded_error", "busy"),
                null, null, new UITurnEvent.Usage(300, 0, 300, null, null, null, 0.001));

        ObjectNode response = Responses.response(new TurnAnswer("turn-1", List.of(), List.of(), failed), "claude-x",
                null, 1L);

        assertThat(response.get("status").asText()).isEqualTo("failed");
        assertThat(response.at("/error/code").asText()).isEqualTo("overloaded_error");
        assertThat(response.at("/usage/input_tokens").asLong()).isEqualTo(1200);
        assertThat(response.at("/usage/input_tokens_details/cached_tokens").asLong()).isEqualTo(1000);
        assertThat(response.at("/usage/output_tokens").asLong()).isEqualTo(80);
        assertThat(response.at("/usage/output_tokens_details/reasoning_tokens").asLong()).isEqualTo(30);
        assertThat(response.at("/usage/total_tokens").asLong()).isEqualTo(1280);
    }
}
