package io.turnstream.gateway.loop;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.gateway.provider.Conversation;
import io.turnstream.gateway.provider.Conversation.AssistantNative;
import io.turnstream.gateway.provider.Conversation.ToolOutput;
import io.turnstream.gateway.provider.Conversation.ToolOutputs;
import io.turnstream.gateway.provider.Conversation.UserText;
import io.turnstream.model.Json;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Where a conversation is split into the part to summarise and the latest steps kept word for word. */
class ConversationCompactorTest {

    private static final UserText PROMPT = new UserText("Fix the build");

    @Test
    void theKeptPartStartsAtAnAssistantStepSoNoToolResultLosesItsCall() {
        List<Conversation.Entry> entries = List.of(PROMPT, toolCall("a"), output("a", 4_000), toolCall("b"),
                output("b", 40));

        int split = ConversationCompactor.splitPoint(entries, 20_000);

        assertThat(split).isEqualTo(3);
        assertThat(entries.get(split)).isInstanceOf(AssistantNative.class);
    }

    @Test
    void atMostHalfOfTheConversationIsKeptSoCompactingAlwaysFreesSpace() {
        List<Conversation.Entry> entries = List.of(PROMPT, toolCall("a"), output("a", 40), toolCall("b"),
                output("b", 4_000));

        assertThat(ConversationCompactor.splitPoint(entries, 20_000)).as("the big last result is summarised too")
                .isEqualTo(entries.size());
    }

    @Test
    void theKeptPartFitsTheKeepRecentBudget() {
        List<Conversation.Entry> entries = List.of(PROMPT, output("x", 40_000), toolCall("a"), output("a", 2_000),
                toolCall("b"), output("b", 2_000));

        assertThat(ConversationCompactor.splitPoint(entries, 700)).isEqualTo(4);
        assertThat(ConversationCompactor.splitPoint(entries, 0)).isEqualTo(entries.size());
    }

    private static AssistantNative toolCall(String id) {
        return new AssistantNative(Json.MAPPER.createArrayNode().add(Json.MAPPER.createObjectNode()
                .put("type", "tool_use").put("id", id).put("name", "read_file")));
    }

    private static ToolOutputs output(String callId, int chars) {
        return new ToolOutputs(List.of(new ToolOutput(callId, "read_file", "x".repeat(chars), true)));
    }
}
