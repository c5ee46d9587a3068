package io.turnstream.gateway.openai;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.turnstream.model.ChangeType;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiItemType;
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

    @Test
    void theOutputIsInTheOrderItWasSaidByStepThenItemNumberWhateverTheRunId() {
        String run = "run-s9-1";
        List<UIUpsert> messages = List.of(message(run + "-s2-0", "c"), message(run + "-s1-10", "b"),
                message(run + "-s1-2", "a"));

        ObjectNode response = Responses.response(new TurnAnswer("turn-1", messages, List.of(), null), "claude-x",
                null, 1L);

        assertThat(response.get("output")).extracting(item -> item.get("id").asText())
                .containsExactly(run + "-s1-2", run + "-s1-10", run + "-s2-0");
    }

    private static UIUpsert message(String itemId, String text) {
        return new UIUpsert(UiPayloadType.ITEM_UPSERT, "turn-1", "thread-1", itemId, UiItemType.MESSAGE,
                ChangeType.COMPLETED, 1, text, null, null, null, null, null, null, null, null, null);
    }
}
