package io.turnstream.gateway.loop;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.gateway.provider.ErrorCodes;
import io.turnstream.gateway.provider.ToolCallRequest;
import io.turnstream.model.ToolResult;
import io.turnstream.model.ToolState;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** A step's wait for its tool calls, without Kafka, threads or a clock: time is what the test says. */
class ToolRoundTest {

    private static final ToolCallRequest READ = new ToolCallRequest("run-1-s1-0", "call-read", "read_file", "{}");
    private static final ToolCallRequest LIST = new ToolCallRequest("run-1-s1-1", "call-list", "list_files", "{}");

    private static ToolRound round(Set<String> answered) {
        return new ToolRound("run-1", 1, List.of(READ, LIST), answered, 1_000, Duration.ofSeconds(10));
    }

    private static ToolResult result(ToolCallRequest call) {
        return new ToolResult(call.callId(), "turn-1", call.name(), true, TextNode.valueOf("ok"), null, 1_100, 1_200);
    }

    @Test
    void eachCallIsAnsweredOnceInWhateverOrderResultsArrive() {
        ToolRound round = round(Set.of());

        assertThat(round.start()).as("the calls are pending since they streamed").isEmpty();
        assertThat(round.on(new ToolRound.Input.Started("call-list", 1_050)))
                .containsExactly(new ToolRound.Output.Running(LIST, 1_050L));
        assertThat(round.on(new ToolRound.Input.Result(result(LIST))))
                .containsExactly(new ToolRound.Output.Answered(LIST, "run-1-s1-out1", result(LIST)));
        assertThat(round.on(new ToolRound.Input.Result(result(LIST)))).as("a duplicate changes nothing").isEmpty();
        assertThat(round.on(new ToolRound.Input.Result(result(READ)))).as("running is never skipped").containsExactly(
                new ToolRound.Output.Running(READ, 1_100L),
                new ToolRound.Output.Answered(READ, "run-1-s1-out0", result(READ)),
                new ToolRound.Output.Ended(ToolRound.Ending.ANSWERED, null));
        assertThat(round.on(new ToolRound.Input.Cancel("late"))).as("nothing follows the end").isEmpty();
    }

    @Test
    void anApprovalAskIsShownOnceAndNotAfterTheCallStarted() {
        ToolRound round = round(Set.of());
        round.start();

        assertThat(round.on(new ToolRound.Input.ApprovalAsked("call-read")))
                .containsExactly(new ToolRound.Output.AwaitingApproval(READ));
        assertThat(round.on(new ToolRound.Input.ApprovalAsked("call-read"))).isEmpty();
        assertThat(round.on(new ToolRound.Input.Started("call-list", 1_010))).hasSize(1);
        assertThat(round.on(new ToolRound.Input.ApprovalAsked("call-list"))).isEmpty();
    }

    @Test
    void theRoundTimesOutAtItsDeadlineNotBefore() {
        ToolRound round = round(Set.of());
        round.start();
        round.on(new ToolRound.Input.Started("call-read", 1_020));

        assertThat(round.on(new ToolRound.Input.Tick(10_999))).isEmpty();
        List<ToolRound.Output> late = round.on(new ToolRound.Input.Tick(11_000));

        assertThat(late).hasSize(3);
        assertThat(late.get(0)).isInstanceOfSatisfying(ToolRound.Output.Unanswered.class, unanswered -> {
            assertThat(unanswered.startedAt()).isEqualTo(1_020);
            assertThat(unanswered.why().status()).isEqualTo(ToolState.ERROR);
        });
        assertThat(late.get(2)).isInstanceOfSatisfying(ToolRound.Output.Ended.class, ended -> {
            assertThat(ended.how()).isEqualTo(ToolRound.Ending.TIMED_OUT);
            assertThat(ended.error().code()).isEqualTo(ErrorCodes.TOOL_RESULT_TIMEOUT);
            assertThat(ended.error().message()).contains("call-read (read_file) within 10 s");
        });
    }

    @Test
    void aCancelAbortsTheCallsLeftAndAHandoverLeavesThemToTheNextOwner() {
        ToolRound cancelled = round(Set.of());
        cancelled.start();
        cancelled.on(new ToolRound.Input.Started("call-read", 1_010));
        cancelled.on(new ToolRound.Input.Result(result(READ)));
        assertThat(cancelled.on(new ToolRound.Input.Cancel("user pressed stop"))).containsExactly(
                new ToolRound.Output.Unanswered(LIST, "run-1-s1-out1", null, UnansweredCall.aborted("user pressed stop")),
                new ToolRound.Output.Ended(ToolRound.Ending.CANCELLED, null));

        ToolRound handedOver = round(Set.of());
        handedOver.start();
        assertThat(handedOver.on(new ToolRound.Input.Handover()))
                .containsExactly(new ToolRound.Output.Ended(ToolRound.Ending.HANDED_OVER, null));
    }

    @Test
    void callsAnsweredBeforeATakeoverAreNotWaitedFor() {
        ToolRound round = round(Set.of("call-read", "call-list"));

        assertThat(round.start()).containsExactly(new ToolRound.Output.Ended(ToolRound.Ending.ANSWERED, null));
    }
}
