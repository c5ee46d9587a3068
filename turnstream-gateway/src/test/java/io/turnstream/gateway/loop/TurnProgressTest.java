package io.turnstream.gateway.loop;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.gateway.provider.Conversation;
import io.turnstream.gateway.provider.ErrorCodes;
import io.turnstream.gateway.provider.StepOutcome;
import io.turnstream.gateway.provider.ToolCallRequest;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.ItemType;
import io.turnstream.model.Json;
import io.turnstream.model.OutputItem;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.StreamPayload.Usage;
import io.turnstream.model.ToolState;
import io.turnstream.model.TurnRequestRecord;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Where a turn taken over from another gateway goes on, from its raw events and step records. */
class TurnProgressTest {

    private static final String RUN = "run-1";
    private static final TurnRequestRecord REQUEST = TurnRequestRecord.request("turn-1", "thread-1", RUN, null, 0,
            Json.MAPPER.createObjectNode().put("prompt", "hi"));
    private static final ToolCallRequest CALL_A = new ToolCallRequest(RUN + "-s1-2", "call-a", "read_file", "{}");
    private static final ToolCallRequest CALL_B = new ToolCallRequest(RUN + "-s1-3", "call-b", "list_files", "{}");

    private final List<StreamPayload> events = new ArrayList<>();
    private final List<TurnRequestRecord> steps = new ArrayList<>();

    @Test
    void nothingPublishedStartsAtTheBeginning() {
        TurnProgress progress = fold();

        assertThat(progress.started()).isFalse();
        assertThat(progress.promptStarted()).isFalse();
        assertThat(progress.nextStep()).isEqualTo(1);
        assertThat(progress.awaiting()).isNull();
        assertThat(progress.interrupted()).isNull();
        assertThat(progress.model()).isEqualTo("requested-model");
    }

    @Test
    void aStepThatWasStreamingIsToBeWithdrawnWithEveryItemItShowedOpenOrDone() {
        started();
        item(RUN + "-s1-0", ItemType.REASONING, true);
        item(RUN + "-s1-1", ItemType.MESSAGE, false);
        item(RUN + "-s1-2", ItemType.MESSAGE, false);
        events.add(new StreamPayload.ItemWithdrawn(RUN + "-s1-2"));

        TurnProgress progress = fold();

        assertThat(progress.started()).isTrue();
        assertThat(progress.promptDone()).isTrue();
        assertThat(progress.nextStep()).isEqualTo(1);
        assertThat(progress.completed()).isEmpty();
        assertThat(progress.interrupted()).isEqualTo(new TurnProgress.Interrupted(1, 3,
                List.of(RUN + "-s1-0", RUN + "-s1-1")));
    }

    @Test
    void aCheckpointedStepWaitingForToolsReusesTheOutputsAlreadyPublished() {
        started();
        steps.add(REQUEST.stepDone(1, TurnProgress.checkpoint("fallback-model", new Usage(10, 5, 15),
                new Usage(4, 1, 5), toolStep(CALL_A, CALL_B), false)));
        events.add(new StreamPayload.ItemStart(CALL_A.itemId(), ItemType.FUNCTION_CALL, null, "read_file", null, "call-a", null));
        events.add(new StreamPayload.ItemStart(CALL_B.itemId(), ItemType.FUNCTION_CALL, null, "list_files", null, "call-b", null));
        events.add(CALL_A.itemDone("anthropic"));
        output(1, 0, CALL_A, "file text");

        TurnProgress progress = fold();

        assertThat(progress.nextStep()).isEqualTo(2);
        assertThat(progress.model()).isEqualTo("fallback-model");
        assertThat(progress.usage()).isEqualTo(new Usage(10, 5, 15));
        assertThat(progress.failedUsage()).isEqualTo(new Usage(4, 1, 5));
        assertThat(progress.completed()).containsExactly(new Conversation.AssistantNative(assistant()));
        assertThat(progress.awaiting().unreleased()).as("the call whose item_done the step's gateway had not sent")
                .containsExactly(CALL_B);
        assertThat(progress.awaiting().calls()).containsExactly(CALL_A, CALL_B);
        assertThat(progress.awaiting().published()).containsOnlyKeys("call-a")
                .containsEntry("call-a", new Conversation.ToolOutput("call-a", "read_file", "file text", true));
        assertThat(progress.interrupted()).isNull();
    }

    @Test
    void aPublishedDenialIsKnownFromItsToolStatusSoTheTurnStillStopsAfterATakeover() {
        started();
        steps.add(REQUEST.stepDone(1, TurnProgress.checkpoint("m", null, null, toolStep(CALL_A, CALL_B), false)));
        output(1, 0, CALL_A, "Not executed: the call was denied: no");
        events.add(new StreamPayload.ToolStatus(CALL_A.itemId(), "call-a", "read_file", ToolState.ERROR, null, 2L,
                ErrorInfo.of(ErrorCodes.TOOL_CALL_DENIED, "no")));
        output(1, 1, CALL_B, "a failure that is no denial");
        events.add(new StreamPayload.ToolStatus(CALL_B.itemId(), "call-b", "list_files", ToolState.ERROR, null, 2L,
                ErrorInfo.of("TOOL_ERROR", "no such directory")));

        assertThat(fold().awaiting().denied()).containsExactly("call-a");
    }

    @Test
    void aFinalStepCheckpointedButNotEndedOnlyNeedsItsResponseDone() {
        started();
        steps.add(REQUEST.stepDone(1, TurnProgress.checkpoint("m", null, null, toolStep(CALL_A), false)));
        output(1, 0, CALL_A, "file text");
        item(RUN + "-s2-0", ItemType.MESSAGE, true);
        steps.add(REQUEST.stepDone(2, TurnProgress.checkpoint("m", null, null, finalStep(), false)));

        TurnProgress progress = fold();

        assertThat(progress.finishReason()).isEqualTo("stop");
        assertThat(progress.completed()).containsExactly(new Conversation.AssistantNative(assistant()),
                new Conversation.ToolOutputs(List.of(new Conversation.ToolOutput("call-a", "read_file", "file text",
                        true))), new Conversation.AssistantNative(assistant()));
        assertThat(progress.awaiting()).isNull();
        assertThat(progress.endedStatus()).isNull();
    }

    @Test
    void aStepContinuedAfterTheTokenLimitIsNotTheEndAndItsContinuationIsCounted() {
        started();
        steps.add(REQUEST.stepDone(1, TurnProgress.checkpoint("m", new Usage(10, 5, 15), null, cutOffStep(), true)));

        TurnProgress progress = fold();

        assertThat(progress.finishReason()).isNull();
        assertThat(progress.nextStep()).isEqualTo(2);
        assertThat(progress.continuations()).isEqualTo(1);
        assertThat(progress.completed()).containsExactly(new Conversation.AssistantNative(assistant()),
                new Conversation.UserText(MaxTokensContinuation.PROMPT));
        assertThat(progress.usage()).as("the turn's usage so far, carried on, not added again")
                .isEqualTo(new Usage(10, 5, 15));
    }

    @Test
    void aTurnThatEndedIsNotResumed() {
        started();
        events.add(new StreamPayload.ResponseDone(RUN, ResponseStatus.COMPLETE, null, "stop"));

        assertThat(fold().endedStatus()).isEqualTo(ResponseStatus.COMPLETE);
    }

    private TurnProgress fold() {
        return TurnProgress.of(RUN, "requested-model", steps, events);
    }

    private void started() {
        events.add(new StreamPayload.ResponseStart(RUN, "turn-1", "thread-1", null, "m", "anthropic", 0));
        item(RUN + "-user-prompt", ItemType.MESSAGE, true);
    }

    private void item(String id, ItemType type, boolean done) {
        events.add(new StreamPayload.ItemStart(id, type, null, null, null, null, null));
        events.add(new StreamPayload.ItemDelta(id, "text"));
        if (done) {
            events.add(new StreamPayload.ItemDone(id, new OutputItem(id, type, "text", null, null, null, null, null,
                    null, null)));
        }
    }

    private void output(int step, int index, ToolCallRequest call, String text) {
        String id = RUN + "-s" + step + "-out" + index;
        events.add(new StreamPayload.ItemStart(id, ItemType.FUNCTION_CALL_OUTPUT, null, call.name(), null,
                call.callId(), null));
        events.add(new StreamPayload.ItemDone(id, new OutputItem(id, ItemType.FUNCTION_CALL_OUTPUT, null, null,
                call.name(), null, call.callId(), TextNode.valueOf(text), true, null)));
    }

    private static JsonNode assistant() {
        return Json.fromString("[{\"type\":\"text\",\"text\":\"Let me look.\"}]", JsonNode.class);
    }

    private static StepOutcome toolStep(ToolCallRequest... calls) {
        return new StepOutcome(ResponseStatus.COMPLETE, "tool_calls", null, List.of(calls), assistant(), null,
                false, false, null, 3);
    }

    private static StepOutcome cutOffStep() {
        return new StepOutcome(ResponseStatus.COMPLETE, "length", null, List.of(), assistant(), null, false, false,
                null, 3);
    }

    private static StepOutcome finalStep() {
        return new StepOutcome(ResponseStatus.COMPLETE, "stop", null, List.of(), assistant(), null, false, false,
                null, 3);
    }
}
