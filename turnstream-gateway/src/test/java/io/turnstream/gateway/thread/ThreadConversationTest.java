package io.turnstream.gateway.thread;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.gateway.provider.Conversation;
import io.turnstream.gateway.turn.TurnRequest;
import io.turnstream.model.ChangeType;
import io.turnstream.model.Json;
import io.turnstream.model.Origins;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiItemType;
import io.turnstream.model.UiPayloadType;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Rebuilding a thread's conversation from what Kafka holds of its turns, without Kafka. */
class ThreadConversationTest {

    private static final JsonNode LIST_ARGS = Json.MAPPER.createObjectNode().put("path", ".");
    /** Step 1 as Anthropic sent it: thinking with its signature, then a tool call. */
    private static final JsonNode STEP_1 = json("""
            [{"type": "thinking", "thinking": "Let me look.", "signature": "c2lnbmF0dXJl"},
             {"type": "tool_use", "id": "call_1", "name": "list_files", "input": {"path": "."}}]""");
    private static final JsonNode STEP_2 = json("[{\"type\": \"text\", \"text\": \"Two entries.\"}]");
    private static final Conversation.ToolOutputs LISTED = new Conversation.ToolOutputs(List.of(
            new Conversation.ToolOutput("call_1", "list_files", "README.md\nsrc", true)));
    /** The first turn as its items tell it: text and tool calls, no reasoning. */
    private static final List<Conversation.Entry> FIRST_TURN_FROM_ITEMS = List.of(
            new Conversation.UserText("What is here?"),
            new Conversation.AssistantToolCalls(null, List.of(new Conversation.ToolCall("call_1", "list_files", LIST_ARGS))),
            LISTED,
            new Conversation.AssistantText("Two entries."));

    /** Turn 1: a prompt, a step that thinks and lists the workspace, its result, a step that answers. */
    private static ThreadConversation.PastTurn firstTurn() {
        return new ThreadConversation.PastTurn("turn-1", "run-1", TurnRequest.prompt("anthropic", "claude", "What is here?"),
                "anthropic", Map.of(
                        1, checkpoint(STEP_1, "[{\"itemId\": \"run-1-s1-1\", \"callId\": \"call_1\", \"name\": "
                                + "\"list_files\", \"arguments\": \"{\\\"path\\\": \\\".\\\"}\"}]"),
                        2, checkpoint(STEP_2, "[]")),
                List.of(item("run-1-user-prompt", UiItemType.MESSAGE, "What is here?", Origins.USER, null),
                        item("run-1-s1-0", UiItemType.REASONING, "Let me look.", null, null),
                        call("run-1-s1-1", "call_1", "list_files", LIST_ARGS),
                        item("run-1-s1-out0", UiItemType.TOOL_OUTPUT, "README.md\nsrc", null, "call_1"),
                        item("run-1-s2-0", UiItemType.MESSAGE, "Two entries.", Origins.AGENT, null)));
    }

    private static TurnRequest onlyTheNewMessage(String prompt) {
        return TurnRequest.prompt("anthropic", "claude", prompt).inThread("thread-1", true);
    }

    @Test
    void theSameProviderGetsItsStepsBackAsItSentThemSignaturesIncluded() {
        TurnRequest rebuilt = ThreadConversation.rebuild(List.of(firstTurn()), "anthropic",
                onlyTheNewMessage("And in src?"));

        assertThat(rebuilt.fromThread()).as("what it sends now is the whole conversation").isFalse();
        assertThat(rebuilt.prompt()).isEqualTo("And in src?");
        assertThat(rebuilt.history()).containsExactly(
                new Conversation.UserText("What is here?"),
                new Conversation.AssistantNative(STEP_1),
                LISTED,
                new Conversation.AssistantNative(STEP_2));
    }

    @Test
    void anotherProviderGetsTheStepsTextAndToolCallsFromTheItems() {
        TurnRequest rebuilt = ThreadConversation.rebuild(List.of(firstTurn()), "openai",
                onlyTheNewMessage("And in src?"));

        assertThat(rebuilt.history()).containsExactlyElementsOf(FIRST_TURN_FROM_ITEMS);
    }

    @Test
    void withoutCheckpointsTheItemsAloneGiveTheSteps() {
        ThreadConversation.PastTurn first = firstTurn();
        ThreadConversation.PastTurn itemsOnly = new ThreadConversation.PastTurn(first.turnId(), first.runId(), first.request(),
                first.provider(), Map.of(), first.items());

        assertThat(ThreadConversation.rebuild(List.of(itemsOnly), "anthropic", onlyTheNewMessage("More?")).history())
                .containsExactlyElementsOf(FIRST_TURN_FROM_ITEMS);
    }

    /** A client-side call: the turn stopped at it; the next request answers it, or moves on without answering. */
    @Test
    void aClientSideCallGetsTheNextRequestsResultOrIsMarkedUnanswered() {
        JsonNode weather = Json.MAPPER.createObjectNode().put("city", "Oslo");
        ThreadConversation.PastTurn asked = new ThreadConversation.PastTurn("turn-2", "run-2",
                TurnRequest.prompt("openai", "gpt-5", "Weather in Oslo?"), "openai", Map.of(),
                List.of(item("run-2-user-prompt", UiItemType.MESSAGE, "Weather in Oslo?", Origins.USER, null),
                        item("run-2-s1-0", UiItemType.MESSAGE, "Checking.", Origins.AGENT, null),
                        call("run-2-s1-1", "call_7", "get_weather", weather)));
        Conversation.ToolOutputs result = new Conversation.ToolOutputs(
                List.of(new Conversation.ToolOutput("call_7", "get_weather", "4 degrees", true)));
        TurnRequest answering = new TurnRequest("openai", "gpt-5", "thread-2", null, List.of(result), null, null, null,
                null, null, true);

        TurnRequest answered = ThreadConversation.rebuild(List.of(asked), "openai", answering);
        TurnRequest movedOn = ThreadConversation.rebuild(List.of(asked), "openai", TurnRequest.prompt("openai",
                "gpt-5", "Never mind.").inThread("thread-2", true));

        Conversation.AssistantToolCalls call = new Conversation.AssistantToolCalls("Checking.",
                List.of(new Conversation.ToolCall("call_7", "get_weather", weather)));
        assertThat(answered.history()).containsExactly(new Conversation.UserText("Weather in Oslo?"), call, result);
        assertThat(answered.prompt()).isNull();
        assertThat(movedOn.history()).containsExactly(new Conversation.UserText("Weather in Oslo?"), call,
                new Conversation.ToolOutputs(List.of(new Conversation.ToolOutput("call_7", "get_weather",
                        ThreadConversation.NO_RESULT, false))));
    }

    /** A turn whose client sent the whole conversation starts the rebuild over from what it sent. */
    @Test
    void aRequestWithTheWholeConversationReplacesWhatCameBefore() {
        TurnRequest whole = new TurnRequest("anthropic", "claude", "thread-1", null,
                List.of(new Conversation.UserText("Start over."), new Conversation.AssistantText("Sure.")), "Hello",
                null, null, null);
        ThreadConversation.PastTurn restarted = new ThreadConversation.PastTurn("turn-3", "run-3", whole, "anthropic", Map.of(),
                List.of(item("run-3-s1-0", UiItemType.MESSAGE, "Hi there.", Origins.AGENT, null)));

        assertThat(ThreadConversation.rebuild(List.of(firstTurn(), restarted), "anthropic", onlyTheNewMessage("Bye"))
                .history()).containsExactly(new Conversation.UserText("Start over."),
                        new Conversation.AssistantText("Sure."), new Conversation.UserText("Hello"),
                        new Conversation.AssistantText("Hi there."));
        TurnRequest notContinuing = TurnRequest.prompt("anthropic", "claude", "Fresh");
        assertThat(ThreadConversation.rebuild(List.of(firstTurn()), "anthropic", notContinuing))
                .isSameAs(notContinuing);
    }

    /**
     * useChat sends the whole history: its assistant messages name the gateway's turns (their id), whose steps come
     * back whole; one Kafka no longer holds says its text.
     */
    @Test
    void aWholeHistoryNamingTheGatewaysAnswersGetsTheirStepsBack() {
        TurnRequest whole = new TurnRequest("anthropic", "claude", "thread-1", null, List.of(
                new Conversation.UserText("What is here?"), new Conversation.EarlierTurn("turn-1", "Two entries."),
                new Conversation.UserText("Thanks."), new Conversation.EarlierTurn("turn-gone", "You are welcome.")),
                "Bye", null, null, null);

        assertThat(TurnRequest.read(whole.toJson())).as("as it travels on llm.turn-requests").isEqualTo(whole);
        assertThat(ThreadConversation.rebuild(List.of(firstTurn()), "anthropic", whole).history()).containsExactly(
                new Conversation.UserText("What is here?"),
                new Conversation.AssistantNative(STEP_1),
                LISTED,
                new Conversation.AssistantNative(STEP_2),
                new Conversation.UserText("Thanks."),
                new Conversation.AssistantText("You are welcome."));
    }

    private static JsonNode checkpoint(JsonNode assistant, String toolCalls) {
        var checkpoint = Json.MAPPER.createObjectNode().put("model", "claude");
        checkpoint.set("assistant", assistant);
        checkpoint.set("toolCalls", json(toolCalls));
        return checkpoint;
    }

    private static UIUpsert item(String id, UiItemType type, String content, String origin, String callId) {
        return new UIUpsert(UiPayloadType.ITEM_UPSERT, "turn", "thread", id, type, ChangeType.COMPLETED, 1, content,
                origin, null, type == UiItemType.TOOL_OUTPUT ? "list_files" : null, null, callId, null,
                type == UiItemType.TOOL_OUTPUT ? true : null, null, null);
    }

    private static UIUpsert call(String id, String callId, String name, JsonNode arguments) {
        return new UIUpsert(UiPayloadType.ITEM_UPSERT, "turn", "thread", id, UiItemType.TOOL_CALL, ChangeType.COMPLETED,
                1, arguments.toString(), null, null, name, arguments, callId, null, null, null, null);
    }

    private static JsonNode json(String text) {
        try {
            return Json.MAPPER.readTree(text);
        } catch (Exception e) {
            throw new IllegalArgumentException(e);
        }
    }
}
