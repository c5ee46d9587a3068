package io.turnstream.gateway.loop;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.gateway.loop.LoopMachine.Input;
import io.turnstream.gateway.loop.LoopMachine.Output;
import io.turnstream.gateway.loop.LoopMachine.State;
import io.turnstream.gateway.loop.LoopMachine.Why;
import io.turnstream.gateway.ItemInvariants;
import io.turnstream.gateway.provider.Conversation;
import io.turnstream.gateway.provider.ErrorCodes;
import io.turnstream.gateway.provider.FinishReasons;
import io.turnstream.gateway.provider.ResolvedProvider;
import io.turnstream.gateway.provider.RetryPolicy;
import io.turnstream.gateway.provider.StepItems;
import io.turnstream.gateway.provider.StepOutcome;
import io.turnstream.gateway.provider.ToolDefinition;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.Json;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.TurnActivity;
import io.turnstream.model.ToolResult;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.TraceContext;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The loop's state machine fed by hand, without a shell, broker, provider or wait: each test plays the
 * provider (streaming into the {@link StepItems} a {@link Output.CallModel} hands out) and the executor, and
 * checks the outputs and the transitions taken.
 */
class LoopMachineTest {

    private static final String MODEL = "sim-large";

    private final TurnSimulationTest.SimClock clock = new TurnSimulationTest.SimClock();
    /** Every output so far, those of streamed payloads included. */
    private final List<Output> outputs = new ArrayList<>();
    private LoopMachine machine;
    /** The turn's fallback model, if any. */
    private String fallback;
    /** The offered tools the caller runs itself. */
    private Set<String> clientTools = Set.of();

    @Test
    void aFinalAnswerEndsTheTurnWithItsLastEventAndCheckpointTogether() {
        Output.CallModel call = lastCall(start());

        call.items().startMessage("Hello").done(null);
        List<Output> ended = machine.on(new Input.CallEnded(complete(call, FinishReasons.STOP), null));

        assertThat(published(outputs)).first().isInstanceOf(StreamPayload.ResponseStart.class);
        assertThat(ended).first().isInstanceOfSatisfying(Output.StepCalled.class,
                called -> assertThat(called.step()).isEqualTo(1));
        assertThat(ended.get(1)).isEqualTo(new Output.Spent(MODEL, new StreamPayload.Usage(10, 5, 15), false));
        Output.Together together = (Output.Together) ended.get(2);
        assertThat(together.writes()).as("the held-back item_done, the step's status and its checkpoint")
                .hasSize(3).last().isInstanceOf(Output.Checkpoint.class);
        assertThat(((Output.Publish) together.writes().get(0)).payload()).isInstanceOf(StreamPayload.ItemDone.class);
        assertThat(ended).last().isEqualTo(new Output.Ended(State.COMPLETE, ResponseStatus.COMPLETE, FinishReasons.STOP));
        assertThat(machine.taken()).extracting(LoopMachine.Transition::why).containsExactly(Why.CALL_STEP,
                Why.FINAL_ANSWER);
    }

    @Test
    void aCancelCutsABackoffShort() {
        Output.CallModel call = lastCall(start());

        List<Output> failed = machine.on(new Input.CallEnded(StepOutcome.refused(ErrorInfo.of("rate_limit_error",
                "slow down"), true, false, null, 0), null));
        assertThat(failed).last().isInstanceOf(Output.WaitUntil.class);
        assertThat(machine.state()).isEqualTo(State.BACKING_OFF);
        List<Output> cancelled = machine.on(new Input.Cancel("the user stopped it"));

        assertThat(published(cancelled)).last().isInstanceOfSatisfying(StreamPayload.ResponseDone.class,
                done -> assertThat(done.status()).isEqualTo(ResponseStatus.ABORTED));
        assertThat(cancelled).last().isEqualTo(new Output.Ended(State.ABORTED, ResponseStatus.ABORTED, null));
        assertThat(call.attempt()).isEqualTo(1);
    }

    @Test
    void aBackoffEndsAtItsDeadlineWithTheNextAttempt() {
        start();
        long retryAt = ((Output.WaitUntil) last(machine.on(new Input.CallEnded(StepOutcome.refused(
                ErrorInfo.of("rate_limit_error", "slow down"), true, false, null, 0), null)))).at();

        clock.now = retryAt - 1;
        assertThat(machine.on(new Input.Tick())).containsExactly(new Output.WaitUntil(retryAt));
        clock.now = retryAt;
        Output.CallModel retry = lastCall(machine.on(new Input.Tick()));

        assertThat(retry.attempt()).isEqualTo(2);
        assertThat(machine.taken()).extracting(LoopMachine.Transition::why).containsExactly(Why.CALL_STEP,
                Why.BACKOFF, Why.BACKOFF_OVER);
    }

    @Test
    void toolCallsAreReleasedAfterTheirCheckpointAndTheirResultsCallTheNextStep() {
        Output.CallModel call = lastCall(start());
        streamCall(call, "write_file", "call-1");

        List<Output> released = machine.on(new Input.CallEnded(complete(call, FinishReasons.TOOL_CALLS), null));

        int checkpoint = indexOf(released, Output.Together.class);
        assertThat(((Output.Together) released.get(checkpoint)).writes()).last().isInstanceOf(Output.Checkpoint.class);
        assertThat(released.get(checkpoint + 1)).as("the call's item_done follows its step's checkpoint")
                .isInstanceOfSatisfying(Output.Publish.class, publish -> assertThat(publish.payload())
                        .isInstanceOf(StreamPayload.ItemDone.class));
        assertThat(released).filteredOn(Output.AwaitTools.class::isInstance).singleElement()
                .isEqualTo(new Output.AwaitTools(call.items().toolCalls()));
        assertThat(last(released)).isInstanceOf(Output.WaitUntil.class);

        machine.on(new Input.Started("call-1", clock.now));
        Output.CallModel next = lastCall(machine.on(new Input.Result(new ToolResult("call-1", "turn", "write_file",
                true, TextNode.valueOf("ok"), null, clock.now, clock.now))));

        assertThat(next.step()).isEqualTo(2);
        assertThat(machine.taken()).extracting(LoopMachine.Transition::why).containsExactly(Why.CALL_STEP,
                Why.TOOL_CALLS, Why.RESULTS_IN);
    }

    @Test
    void aHandoverWhileAStepStreamsTakesEffectAtTheNextStepBoundary() {
        Output.CallModel call = lastCall(start());
        call.items().startMessage("Part one").done(null);

        assertThat(machine.on(new Input.Handover())).as("nothing happens inside the step").isEmpty();
        call.items().closeAll();
        // cut off at the output token limit: the continuation is the next step boundary
        List<Output> ended = machine.on(new Input.CallEnded(complete(call, FinishReasons.LENGTH), null));

        assertThat(ended).filteredOn(Output.Checkpoint.class::isInstance).isEmpty();
        assertThat(ended).filteredOn(Output.Together.class::isInstance).singleElement()
                .satisfies(together -> assertThat(((Output.Together) together).writes())
                        .hasAtLeastOneElementOfType(Output.Checkpoint.class));
        assertThat(ended).last().isEqualTo(new Output.Ended(State.HANDED_OVER, ResponseStatus.ABORTED, null));
        assertThat(published(ended)).noneMatch(payload -> payload instanceof StreamPayload.ResponseDone);
    }

    @Test
    void aFailedWriteEndsTheTurnAtTheStepsEndWithoutCallingAgain() {
        Output.CallModel call = lastCall(start());
        machine.on(new Input.PublishFailed());
        call.items().startMessage("lost").done(null);

        List<Output> ended = machine.on(new Input.CallEnded(complete(call, FinishReasons.STOP), null));

        assertThat(ended).contains(new Output.CancelTurn("events cannot be published"));
        assertThat(ended).last().isEqualTo(new Output.Ended(State.FAILED, ResponseStatus.ERROR, null));
        assertThat(ended).noneMatch(Output.CallModel.class::isInstance);
    }

    @Test
    void aTurnCancelledBeforeItRunsHereEndsAbortedWithoutCallingTheModel() {
        machine = machine();
        assertThat(machine.on(new Input.Cancel("stopped before the takeover"))).isEmpty();

        List<Output> ended = machine.start();

        assertThat(ended).noneMatch(Output.CallModel.class::isInstance);
        assertThat(published(ended)).last().isInstanceOfSatisfying(StreamPayload.ResponseDone.class,
                done -> assertThat(done.status()).isEqualTo(ResponseStatus.ABORTED));
        assertThat(machine.taken()).extracting(LoopMachine.Transition::why).containsExactly(Why.CANCEL);
    }

    @Test
    void aFailedTurnReportsWhatItUsedWithEveryFailedCallOnceApart() {
        firstStepCallsWriteFile();
        Output.CallModel call = lastCall(machine.on(new Input.Result(new ToolResult("call-1", "turn", "write_file",
                true, TextNode.valueOf("ok"), null, clock.now, clock.now))));

        // step 2: three attempts fail, each after using tokens; the last one gives the step up
        List<Output> ended = List.of();
        for (long used : new long[] {100, 200, 400}) {
            assertThat(call.step()).isEqualTo(2);
            ended = record(machine.on(new Input.CallEnded(new StepOutcome(ResponseStatus.ERROR, null,
                    new StreamPayload.Usage(used, 0, used), List.of(), Json.MAPPER.createArrayNode(),
                    ErrorInfo.of("overloaded_error", "busy"), true, false, null, 0), null)));
            if (machine.state() == State.BACKING_OFF) {
                clock.now = ((Output.WaitUntil) last(ended)).at();
                call = lastCall(record(machine.on(new Input.Tick())));
            }
        }

        assertThat(ended).last().isEqualTo(new Output.Ended(State.FAILED, ResponseStatus.ERROR, null));
        assertThat(published(ended)).last().isInstanceOfSatisfying(StreamPayload.ResponseError.class, error -> {
            assertThat(error.usage()).as("step 1's").isEqualTo(new StreamPayload.Usage(10, 5, 15));
            assertThat(error.failedAttemptsUsage()).as("each failed call once, the one that gave the step up too")
                    .isEqualTo(new StreamPayload.Usage(700, 0, 700));
        });
        assertThat(outputs).as("what the metrics count: every call once, the failed ones apart")
                .filteredOn(Output.Spent.class::isInstance).containsExactly(
                        new Output.Spent(MODEL, new StreamPayload.Usage(10, 5, 15), false),
                        new Output.Spent(MODEL, new StreamPayload.Usage(100, 0, 100), true),
                        new Output.Spent(MODEL, new StreamPayload.Usage(200, 0, 200), true),
                        new Output.Spent(MODEL, new StreamPayload.Usage(400, 0, 400), true));
    }

    @Test
    void aGatewayFailureReportsWhatTheTurnUsedSoFar() {
        firstStepCallsWriteFile();

        List<Output> ended = machine.failedInside("a bug", List.of());

        assertThat(published(ended)).last().isInstanceOfSatisfying(StreamPayload.ResponseError.class, error -> {
            assertThat(error.usage()).isEqualTo(new StreamPayload.Usage(10, 5, 15));
            assertThat(error.failedAttemptsUsage()).isNull();
        });
    }

    /** Starts the turn; its step 1 calls write_file (call-1) and completes, using 10 + 5 tokens. */
    private void firstStepCallsWriteFile() {
        Output.CallModel call = lastCall(start());
        streamCall(call, "write_file", "call-1");
        record(machine.on(new Input.CallEnded(complete(call, FinishReasons.TOOL_CALLS), null)));
    }

    @Test
    void aFailureInsideWhileAStepStreamsClosesWhatItShowedAndEndsTheTurnInternal() {
        Output.CallModel call = lastCall(start());
        call.items().startMessage("half a");
        streamCall(call, "write_file", "call-1");

        List<Output> ended = machine.failedInside("NullPointerException", List.of());

        assertThat(published(ended)).extracting(StreamPayload::getClass).containsSubsequence(
                StreamPayload.ItemError.class, StreamPayload.ItemError.class, StreamPayload.ItemStart.class,
                StreamPayload.ItemDone.class, StreamPayload.ResponseError.class);
        assertThat(published(ended)).as("the message and the call streamed whole (never released) are closed")
                .filteredOn(StreamPayload.ItemError.class::isInstance).extracting(ItemInvariants::itemId)
                .containsExactly("run-s1-0", "run-s1-1");
        assertThat(published(ended)).last().isInstanceOfSatisfying(StreamPayload.ResponseError.class,
                error -> assertThat(error.error().code()).isEqualTo(ErrorCodes.INTERNAL));
        assertThat(ended).last().isEqualTo(new Output.Ended(State.FAILED, ResponseStatus.ERROR, null));
        assertThat(machine.taken()).extracting(LoopMachine.Transition::why).containsExactly(Why.CALL_STEP,
                Why.GATEWAY_ERROR);
        assertThat(machine.failedInside("again", List.of())).as("an ended turn fails no more").isEmpty();
    }

    /** Reached only by a bug in the machine's own start: the shell has nothing to perform before it. */
    @Test
    void aFailureBeforeTheStartEndsTheTurnWithOnlyItsError() {
        machine = machine();

        List<Output> ended = machine.failedInside("IllegalStateException", List.of());

        assertThat(published(ended)).singleElement().isInstanceOf(StreamPayload.ResponseError.class);
        assertThat(machine.taken()).containsExactly(new LoopMachine.Transition(State.STARTING, Why.GATEWAY_ERROR,
                State.FAILED));
    }

    @Test
    void aRefusedSummarisingCallIsRetriedAfterTheProvidersRetryAfter() {
        Output.Compact compact = compactionAfterAPromptTooLong();

        List<Output> refused = machine.on(new Input.Compacted(new ConversationCompactor.Result(StepOutcome.refused(
                ErrorInfo.of("rate_limit_error", "slow down"), true, false, Duration.ofSeconds(7), 0), null,
                compact.entries(), 0), null));

        assertThat(machine.state()).isEqualTo(State.BACKING_OFF);
        assertThat(last(refused)).isEqualTo(new Output.WaitUntil(clock.now + 7_000));
        assertThat(published(refused)).singleElement().isInstanceOfSatisfying(StreamPayload.TurnStatus.class,
                status -> assertThat(status.status()).isEqualTo(TurnActivity.RETRYING));
        clock.now += 7_000;
        assertThat(last(machine.on(new Input.Tick()))).as("the summarising call again")
                .isInstanceOfSatisfying(Output.Compact.class, again -> assertThat(again.model()).isEqualTo(MODEL));
        Output.CallModel call = lastCall(machine.on(new Input.Compacted(new ConversationCompactor.Result(
                new StepOutcome(ResponseStatus.COMPLETE, FinishReasons.STOP, null, List.of(),
                        Json.MAPPER.createArrayNode(), null, false, false, null, 1), "the story so far",
                List.of(new Conversation.UserText("the story so far")), 1), null)));

        assertThat(call.step()).isEqualTo(1);
        assertThat(machine.taken()).extracting(LoopMachine.Transition::why).containsExactly(Why.CALL_STEP,
                Why.PROMPT_TOO_LONG, Why.BACKOFF, Why.BACKOFF_OVER, Why.COMPACTION_ENDED);
    }

    @Test
    void anOverloadedSummarisingCallFallsBackAtOnceAndAFailureAfterItsLastAttemptFailsTheStep() {
        fallback = "sim-small";
        compactionAfterAPromptTooLong();

        List<Output> fellBack = machine.on(new Input.Compacted(new ConversationCompactor.Result(StepOutcome.refused(
                ErrorInfo.of("overloaded_error", "busy"), true, true, null, 0), null, List.of(), 0), null));

        assertThat(last(fellBack)).isInstanceOfSatisfying(Output.Compact.class,
                again -> assertThat(again.model()).isEqualTo("sim-small"));
        assertThat(fellBack).contains(new Output.Count(GatewayMetrics.Counter.FALLBACKS));
        // a 500 on each of the attempts left (3 in all): the prompt is still too long, and the step fails
        List<Output> ended = List.of();
        while (machine.state() != State.FAILED) {
            ended = machine.on(new Input.Compacted(new ConversationCompactor.Result(StepOutcome.refused(
                    ErrorInfo.of("api_error", "oops"), true, false, null, 0), null, List.of(), 0), null));
            if (machine.state() == State.BACKING_OFF) {
                clock.now = ((Output.WaitUntil) last(ended)).at();
                assertThat(last(machine.on(new Input.Tick()))).isInstanceOf(Output.Compact.class);
            }
        }
        assertThat(published(ended)).last().isInstanceOfSatisfying(StreamPayload.ResponseError.class,
                error -> assertThat(error.error().code()).isEqualTo(ErrorCodes.CONTEXT_OVERFLOW));
        assertThat(machine.taken()).extracting(LoopMachine.Transition::why).containsExactly(Why.CALL_STEP,
                Why.PROMPT_TOO_LONG, Why.RETRY, Why.BACKOFF, Why.BACKOFF_OVER, Why.STEP_FAILED);
    }

    @Test
    void aDenialWithOnDenyStopEndsTheTurnDeniedAndClosesAClientSideCallOfTheSameStep() {
        clientTools = Set.of("ask_user");
        Output.CallModel call = lastCall(start());
        streamCall(call, "write_file", "call-1");
        streamCall(call, "ask_user", "call-2");
        record(machine.on(new Input.CallEnded(complete(call, FinishReasons.TOOL_CALLS), null)));

        List<Output> ended = record(machine.on(new Input.Result(new ToolResult("call-1", "turn", "write_file", false,
                TextNode.valueOf("Not executed: the call was denied"), ErrorInfo.of(ErrorCodes.TOOL_CALL_DENIED,
                "Not executed: the call was denied"), clock.now, clock.now))));

        assertThat(published(ended)).last().isInstanceOfSatisfying(StreamPayload.ResponseDone.class,
                done -> assertThat(done.finishReason()).as("the turn stops because of the denial")
                        .isEqualTo(FinishReasons.TOOL_DENIED));
        assertThat(published(ended)).as("the client-side call, not returned to be run, is closed with an output")
                .anySatisfy(event -> assertThat(event).isEqualTo(new StreamPayload.ItemError("run-s1-1",
                        ErrorInfo.of(ErrorCodes.TOOL_CALL_ABORTED, LoopMachine.DENIAL_STOPS_THE_TURN))))
                .anySatisfy(event -> assertThat(event).isInstanceOfSatisfying(StreamPayload.ItemDone.class,
                        done -> assertThat(done.finalItem().callId()).isEqualTo("call-2")));
        assertThat(machine.taken()).extracting(LoopMachine.Transition::why).containsExactly(Why.CALL_STEP,
                Why.TOOL_CALLS, Why.DENIED);
        ItemInvariants.assertEveryStartedItemIsClosedOnceAndNothingFollows(published(outputs));
    }

    @Test
    void aHandoverWhileCompactingTakesEffectBeforeTheStepsCall() {
        Output.Compact compact = compactionAfterAPromptTooLong();

        assertThat(machine.on(new Input.Handover())).as("the summarising call runs on").isEmpty();
        List<Output> ended = machine.on(new Input.Compacted(new ConversationCompactor.Result(new StepOutcome(
                ResponseStatus.COMPLETE, FinishReasons.STOP, new StreamPayload.Usage(50, 5, 55), List.of(),
                Json.MAPPER.createArrayNode(), null, false, false, null, 1), "the story so far",
                List.of(new Conversation.UserText("the story so far")), 1), null));

        assertThat(ended).noneMatch(Output.CallModel.class::isInstance);
        assertThat(published(ended)).as("the next owner compacts again: this summary is not shown").isEmpty();
        assertThat(ended).as("the summarising call is counted in the metrics")
                .contains(new Output.Spent(compact.model(), new StreamPayload.Usage(50, 5, 55), false));
        assertThat(ended).last().isEqualTo(new Output.Ended(State.HANDED_OVER, ResponseStatus.ABORTED, null));
        assertThat(machine.taken()).extracting(LoopMachine.Transition::why).containsExactly(Why.CALL_STEP,
                Why.PROMPT_TOO_LONG, Why.HANDOVER_WHILE_COMPACTING);
    }

    @Test
    void aHandoverWhileTheSummarisingCallBacksOffTakesEffectAtOnce() {
        Output.Compact compact = compactionAfterAPromptTooLong();
        machine.on(new Input.Compacted(new ConversationCompactor.Result(StepOutcome.refused(
                ErrorInfo.of("rate_limit_error", "slow down"), true, false, Duration.ofSeconds(7), 0), null,
                compact.entries(), 0), null));
        assertThat(machine.state()).isEqualTo(State.BACKING_OFF);

        List<Output> ended = machine.on(new Input.Handover());

        assertThat(ended).containsExactly(new Output.Ended(State.HANDED_OVER, ResponseStatus.ABORTED, null));
        assertThat(machine.taken()).extracting(LoopMachine.Transition::to).endsWith(State.BACKING_OFF,
                State.HANDED_OVER);
    }

    @Test
    void aShellFailingBeforeItPublishedTheTurnsEndEndsItInternalWithItsUsage() {
        clientTools = Set.of("ask_user");
        Output.CallModel call = lastCall(start());
        streamCall(call, "ask_user", "call-1");
        List<Output> returned = record(machine.on(new Input.CallEnded(complete(call, FinishReasons.TOOL_CALLS), null)));
        assertThat(returned).last().isEqualTo(new Output.Ended(State.COMPLETE, ResponseStatus.COMPLETE,
                FinishReasons.TOOL_CALLS));

        // the shell threw before it performed the end: its response_done is not published
        List<Output> failed = machine.failedInside("IllegalStateException", List.of());

        assertThat(published(failed)).last().isInstanceOfSatisfying(StreamPayload.ResponseError.class, error -> {
            assertThat(error.error().code()).isEqualTo(ErrorCodes.INTERNAL);
            assertThat(error.usage()).isEqualTo(new StreamPayload.Usage(10, 5, 15));
        });
        assertThat(published(failed)).as("the call it no longer returns to the caller is closed")
                .filteredOn(StreamPayload.ItemError.class::isInstance).extracting(ItemInvariants::itemId)
                .containsExactly("run-s1-0");
        assertThat(failed).last().isEqualTo(new Output.Ended(State.FAILED, ResponseStatus.ERROR, null));
        assertThat(machine.taken()).extracting(LoopMachine.Transition::why).containsExactly(Why.CALL_STEP,
                Why.CLIENT_TOOL, Why.GATEWAY_ERROR);
        assertThat(machine.failedInside("again", List.of())).as("a turn that failed inside fails no more").isEmpty();
    }

    @Test
    void aTurnHandedOverStaysSoWhenTheShellFailsAfter() {
        Output.CallModel call = lastCall(start());
        machine.on(new Input.Handover());
        call.items().startMessage("Part one").done(null);
        machine.on(new Input.CallEnded(complete(call, FinishReasons.LENGTH), null));
        assertThat(machine.state()).isEqualTo(State.HANDED_OVER);

        assertThat(machine.failedInside("IllegalStateException", List.of())).as("the next owner goes on").isEmpty();
    }

    /** Starts the turn; the provider refuses step 1's prompt as too long, so the machine compacts it. */
    private Output.Compact compactionAfterAPromptTooLong() {
        lastCall(start());
        List<Output> compacting = machine.on(new Input.CallEnded(StepOutcome.refused(ErrorInfo.of(
                "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum"), false, false, null, 0),
                null));
        assertThat(machine.state()).isEqualTo(State.COMPACTING);
        return (Output.Compact) last(compacting);
    }

    private List<Output> start() {
        machine = machine();
        return record(machine.start());
    }

    private LoopMachine machine() {
        Properties settings = new Properties();
        settings.setProperty("turnstream.gateway.context-window." + MODEL, "200000");
        LoopConfig config = new LoopConfig(1024, null, new RetryPolicy(3, Duration.ofSeconds(1), Duration.ofSeconds(30)),
                Duration.ofSeconds(60), PriceTable.from(Settings.of(new Properties())),
                CompactionConfig.from(Settings.of(settings)), LoopConfig.OnDeny.STOP);
        AgentLoop.Turn turn = new AgentLoop.Turn("turn", "thread", "run", new ResolvedProvider("sim", null, null, MODEL),
                fallback, "be brief", List.of(), "do it", List.of(new ToolDefinition("write_file", "writes",
                Json.MAPPER.createObjectNode()), new ToolDefinition("ask_user", "asks", Json.MAPPER.createObjectNode())),
                4, TraceContext.fresh(), null, clientTools);
        return new LoopMachine(turn, TurnProgress.fresh(MODEL), config, new ThreadAllowances(), clock, new Random(1),
                payload -> outputs.addAll(machine.on(new Input.Streamed(payload))));
    }

    private List<Output> record(List<Output> next) {
        outputs.addAll(next);
        return next;
    }

    private static StepOutcome complete(Output.CallModel call, String finishReason) {
        return new StepOutcome(ResponseStatus.COMPLETE, finishReason, new StreamPayload.Usage(10, 5, 15),
                call.items().toolCalls(),
                Json.MAPPER.createArrayNode(), null, false, false, null, call.items().published());
    }

    /** The model calls {@code tool} in the step {@code call} streams: the call streams whole. */
    private static void streamCall(Output.CallModel call, String tool, String callId) {
        StepItems.Item item = call.items().startFunctionCall(tool, callId);
        item.appendArguments("{}");
        item.done(null);
    }

    private static Output.CallModel lastCall(List<Output> outputs) {
        assertThat(last(outputs)).isInstanceOf(Output.CallModel.class);
        return (Output.CallModel) last(outputs);
    }

    private static Output last(List<Output> outputs) {
        return outputs.get(outputs.size() - 1);
    }

    private static int indexOf(List<Output> outputs, Class<?> type) {
        for (int i = 0; i < outputs.size(); i++) {
            if (type.isInstance(outputs.get(i))) {
                return i;
            }
        }
        throw new AssertionError("no " + type.getSimpleName() + " in " + outputs);
    }

    /** The payloads to publish, those that commit together included, in order. */
    private static List<StreamPayload> published(List<Output> outputs) {
        List<StreamPayload> payloads = new ArrayList<>();
        for (Output output : outputs) {
            if (output instanceof Output.Publish publish) {
                payloads.add(publish.payload());
            } else if (output instanceof Output.Together together) {
                payloads.addAll(published(together.writes()));
            }
        }
        return payloads;
    }
}
