package io.turnstream.gateway.provider;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.ErrorInfo;
import io.turnstream.model.ItemType;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.ToolState;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The items of a step: read-only calls released as they complete, and a message carried to a continuation. */
class StepItemsTest {

    private final List<StreamPayload> emitted = new ArrayList<>();
    private final StepItems.Carried open = new StepItems.Carried("run-s1-0", "The first half", true);

    @Test
    void aReadOnlyToolsCallIsDoneAsItCompletesOthersWaitForTheCommit() {
        StepItems items = new StepItems("run-s1", "anthropic", emitted::add).startingEarly(Set.of("read_file"));

        StepItems.Item read = items.startFunctionCall("read_file", "call-r");
        read.appendArguments("{\"path\":\"a\"}");
        read.done(null);
        StepItems.Item write = items.startFunctionCall("write_file", "call-w");
        write.appendArguments("{\"path\":\"b\"}");
        write.done(null);

        assertThat(emitted).filteredOn(StreamPayload.ItemDone.class::isInstance).extracting(p -> ((StreamPayload.ItemDone) p).itemId())
                .containsExactly(read.id());
        assertThat(items.toolCalls()).extracting(ToolCallRequest::callId).containsExactly("call-r", "call-w");
        assertThat(emitted).filteredOn(StreamPayload.ToolStatus.class::isInstance)
                .extracting(p -> ((StreamPayload.ToolStatus) p).status()).containsExactly(ToolState.PENDING, ToolState.PENDING);
    }

    @Test
    void aContinuationStreamsIntoTheCarriedMessageWithoutStartingAnItem() {
        StepItems items = new StepItems("run-s2", "anthropic", emitted::add).carrying(open, false);

        StepItems.Item message = items.startMessage(" and");
        message.append(" the rest.");
        message.done(null);

        assertThat(message.id()).isEqualTo("run-s1-0");
        assertThat(emitted).noneMatch(StreamPayload.ItemStart.class::isInstance);
        assertThat(finalText(emitted, "run-s1-0")).isEqualTo("The first half and the rest.");
    }

    @Test
    void theProvidersOwnFinalTextFollowsTheCarriedText() {
        StepItems items = new StepItems("run-s2", "openai", emitted::add).carrying(open, false);

        items.startMessage(null).done(" and the rest.");

        assertThat(finalText(emitted, "run-s1-0")).isEqualTo("The first half and the rest.");
    }

    @Test
    void aFailedAttemptThatWroteIntoTheCarriedMessageWithdrawsItAndTheNextShowsItsTextAgain() {
        StepItems items = new StepItems("run-s2", "anthropic", emitted::add).carrying(open, false);
        items.startMessage(" and a broken").append(" stream");

        items.withdraw();
        StepItems retry = items.nextAttempt();
        StepItems.Item message = retry.startMessage(" and the rest.");
        message.done(null);

        assertThat(emitted).contains(new StreamPayload.ItemWithdrawn("run-s1-0"));
        assertThat(message.id()).as("a new item of the continuing step").isEqualTo("run-s2-0");
        StreamPayload.ItemStart start = (StreamPayload.ItemStart) emitted.stream()
                .filter(StreamPayload.ItemStart.class::isInstance).findFirst().orElseThrow();
        assertThat(start.initialContent()).isEqualTo("The first half and the rest.");
        assertThat(finalText(emitted, "run-s2-0")).isEqualTo("The first half and the rest.");
    }

    @Test
    void aFailedAttemptThatDidNotTouchTheCarriedMessageLeavesItOpenForTheNext() {
        StepItems items = new StepItems("run-s2", "anthropic", emitted::add).carrying(open, false);
        items.startReasoning("hmm");

        items.withdraw();
        StepItems.Item message = items.nextAttempt().startMessage(" and the rest.");

        assertThat(message.id()).isEqualTo("run-s1-0");
        assertThat(emitted).doesNotContain(new StreamPayload.ItemWithdrawn("run-s1-0"));
    }

    @Test
    void aCarriedMessageNoMessageJoinsIsClosedWithItsTextNeverAsAnErrorOrCancelled() {
        new StepItems("run-s2", "anthropic", emitted::add).carrying(open, false).closeAll();
        new StepItems("run-s3", "anthropic", emitted::add).carrying(new StepItems.Carried("run-s2-0", "two", true), false)
                .failAll(ErrorInfo.of("api_error", "oops"));
        new StepItems("run-s4", "anthropic", emitted::add).carrying(new StepItems.Carried("run-s3-0", "three", true), false)
                .cancelAll();

        assertThat(finalText(emitted, "run-s1-0")).isEqualTo("The first half");
        assertThat(finalText(emitted, "run-s2-0")).isEqualTo("two");
        assertThat(finalText(emitted, "run-s3-0")).isEqualTo("three");
        assertThat(emitted).noneMatch(p -> p instanceof StreamPayload.ItemError || p instanceof StreamPayload.ItemCancelled);
    }

    @Test
    void aWithdrawnCarriedMessageNoMessageJoinsIsShownAgainWhenTheStepEnds() {
        new StepItems("run-s2", "anthropic", emitted::add)
                .carrying(new StepItems.Carried("run-s1-0", "The first half", false), false).closeAll();

        StreamPayload.ItemStart start = (StreamPayload.ItemStart) emitted.get(0);
        assertThat(start.itemType()).isEqualTo(ItemType.MESSAGE.wire());
        assertThat(start.initialContent()).isEqualTo("The first half");
        assertThat(finalText(emitted, start.itemId())).isEqualTo("The first half");
    }

    private static String finalText(List<StreamPayload> payloads, String itemId) {
        return payloads.stream().filter(p -> p instanceof StreamPayload.ItemDone done && done.itemId().equals(itemId))
                .map(p -> ((StreamPayload.ItemDone) p).finalItem().content()).findFirst().orElseThrow();
    }
}
