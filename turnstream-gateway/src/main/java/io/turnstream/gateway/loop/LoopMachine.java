package io.turnstream.gateway.loop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.gateway.loop.GatewayMetrics.Counter;
import io.turnstream.gateway.provider.Conversation;
import io.turnstream.gateway.provider.ErrorCodes;
import io.turnstream.gateway.provider.FinishReasons;
import io.turnstream.gateway.provider.ModelRequest;
import io.turnstream.gateway.provider.StepItems;
import io.turnstream.gateway.provider.StepOutcome;
import io.turnstream.gateway.provider.ToolCallRequest;
import io.turnstream.gateway.provider.ToolDefinition;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.ItemType;
import io.turnstream.model.Json;
import io.turnstream.model.Origins;
import io.turnstream.model.OutputItem;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StepItemIds;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.StreamPayload.Usage;
import io.turnstream.model.ToolResult;
import io.turnstream.model.ToolState;
import java.time.Clock;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.random.RandomGenerator;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A whole turn's progress as one plain state machine, as the topology's {@code TurnMachine} is: it is fed
 * what happens ({@link Input}: the provider's stream events, a model call's or a compaction's end, tool
 * results, start markers and approval asks, a cancel, a handover, the clock's ticks) and answers what to do
 * ({@link Output}: raw events to publish, step checkpoints, which of them commit together, model calls and
 * compactions to make, tool calls to wait for, when to tick it, how the turn ended). It makes no call,
 * starts no thread, waits not and reads time only from the injected clock; {@link AgentLoop} is the shell
 * that performs its outputs on Kafka, over HTTP and on the turn's thread. It sequences the plain machines
 * of a step's attempts ({@link StepAttempts}) and of a step's tool calls ({@link ToolRound}), and decides
 * compaction, {@code max_tokens} continuation, the step limit, a denial's end and the handover.
 *
 * <p>Its states and every transition it may take are the table {@link #TRANSITIONS}: {@link #go} refuses
 * any other, and docs/gateway.md's diagram is generated from it (LoopMachineDiagramTest).
 */
public final class LoopMachine {

    private static final Logger LOG = LoggerFactory.getLogger(LoopMachine.class);
    /** Why a client-side call of a step whose call was denied is closed (on-deny stop). */
    static final String DENIAL_STOPS_THE_TURN =
            "not returned: a tool call of the step was denied, which stops the turn";

    /** Where the turn is. */
    public enum State {
        /** Before its first input: it publishes its start, or resumes where another gateway left it. */
        STARTING,
        /** A summarisation call shrinks the conversation before the step's model call. */
        COMPACTING,
        /** A model call of the step streams. */
        CALLING,
        /** The step waits before its next attempt. */
        BACKING_OFF,
        /** The step's tool calls run; their results are awaited. */
        AWAITING_TOOLS,
        COMPLETE,
        ABORTED,
        FAILED,
        /** Another gateway goes on with the turn. */
        HANDED_OVER;

        boolean ended() {
            return this == COMPLETE || this == ABORTED || this == FAILED || this == HANDED_OVER;
        }
    }

    /** Why the machine moves, as the diagram's edges say it. */
    public enum Why {
        CALL_STEP("call the step"),
        RETRY("retry (fallback model)"),
        BACKOFF("retryable failure"),
        BACKOFF_OVER("backoff over"),
        NEARLY_FULL("context nearly full"),
        PROMPT_TOO_LONG("prompt too long"),
        COMPACTION_ENDED("compaction ended"),
        CONTINUE("max_tokens: continue"),
        TOOL_CALLS("tool calls released"),
        RESUMED_AWAITING("resumed awaiting tools"),
        RESULTS_IN("every call answered"),
        FINAL_ANSWER("final answer"),
        STEP_LIMIT("step limit"),
        CLIENT_TOOL("client-side tool called"),
        DENIED("denied, on-deny stop"),
        ALREADY_ENDED("resumed after its last step"),
        CANCEL("cancel"),
        STEP_FAILED("step failed"),
        TOOL_TIMEOUT("tool result timeout"),
        UNPUBLISHABLE("events cannot be published"),
        HANDOVER("handover at a step boundary"),
        HANDOVER_WHILE_COMPACTING("handover while compacting"),
        GATEWAY_ERROR("gateway error");

        private final String label;

        Why(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    /** One edge of the machine: from a state, for a reason, to a state. */
    public record Transition(State from, Why why, State to) {
    }

    /** Every transition the machine may take. */
    public static final Set<Transition> TRANSITIONS;

    static {
        Set<Transition> table = new HashSet<>();
        // step boundaries: after the start (nothing is known of the context yet; never past the step limit: a
        // turn has a step at least, a resumed one starts after a continued step or awaits its tool round), after
        // a continued step (which never passes the step limit: it extends it), after a tool round
        table.add(new Transition(State.STARTING, Why.CALL_STEP, State.CALLING));
        table.add(new Transition(State.STARTING, Why.HANDOVER, State.HANDED_OVER));
        table.add(new Transition(State.CALLING, Why.CONTINUE, State.CALLING));
        table.add(new Transition(State.CALLING, Why.NEARLY_FULL, State.COMPACTING));
        table.add(new Transition(State.CALLING, Why.HANDOVER, State.HANDED_OVER));
        table.add(new Transition(State.AWAITING_TOOLS, Why.RESULTS_IN, State.CALLING));
        table.add(new Transition(State.AWAITING_TOOLS, Why.NEARLY_FULL, State.COMPACTING));
        table.add(new Transition(State.AWAITING_TOOLS, Why.STEP_LIMIT, State.COMPLETE));
        table.add(new Transition(State.AWAITING_TOOLS, Why.HANDOVER, State.HANDED_OVER));
        table.add(new Transition(State.COMPACTING, Why.COMPACTION_ENDED, State.CALLING));
        // a handover during a compaction goes before its next model call (the step's, or the summarising call again)
        table.add(new Transition(State.COMPACTING, Why.HANDOVER_WHILE_COMPACTING, State.HANDED_OVER));
        table.add(new Transition(State.BACKING_OFF, Why.HANDOVER_WHILE_COMPACTING, State.HANDED_OVER));
        // the summarising call is retried as a step's call is: at once on the fallback model, or after a backoff
        table.add(new Transition(State.COMPACTING, Why.RETRY, State.COMPACTING));
        table.add(new Transition(State.COMPACTING, Why.BACKOFF, State.BACKING_OFF));
        table.add(new Transition(State.BACKING_OFF, Why.BACKOFF_OVER, State.COMPACTING));
        for (State from : EnumSet.of(State.STARTING, State.CALLING, State.AWAITING_TOOLS)) {
            table.add(new Transition(from, Why.CLIENT_TOOL, State.COMPLETE));
        }
        table.add(new Transition(State.CALLING, Why.RETRY, State.CALLING));
        table.add(new Transition(State.CALLING, Why.BACKOFF, State.BACKING_OFF));
        table.add(new Transition(State.BACKING_OFF, Why.BACKOFF_OVER, State.CALLING));
        table.add(new Transition(State.CALLING, Why.PROMPT_TOO_LONG, State.COMPACTING));
        table.add(new Transition(State.CALLING, Why.TOOL_CALLS, State.AWAITING_TOOLS));
        table.add(new Transition(State.STARTING, Why.RESUMED_AWAITING, State.AWAITING_TOOLS));
        table.add(new Transition(State.CALLING, Why.FINAL_ANSWER, State.COMPLETE));
        table.add(new Transition(State.AWAITING_TOOLS, Why.DENIED, State.COMPLETE));
        table.add(new Transition(State.STARTING, Why.ALREADY_ENDED, State.COMPLETE));
        for (State from : EnumSet.of(State.STARTING, State.CALLING, State.BACKING_OFF, State.COMPACTING,
                State.AWAITING_TOOLS)) {
            table.add(new Transition(from, Why.CANCEL, State.ABORTED));
        }
        for (State from : EnumSet.of(State.CALLING, State.BACKING_OFF, State.COMPACTING)) {
            table.add(new Transition(from, Why.UNPUBLISHABLE, State.FAILED));
        }
        table.add(new Transition(State.CALLING, Why.STEP_FAILED, State.FAILED));
        table.add(new Transition(State.COMPACTING, Why.STEP_FAILED, State.FAILED));
        table.add(new Transition(State.AWAITING_TOOLS, Why.TOOL_TIMEOUT, State.FAILED));
        for (State from : State.values()) {
            if (from != State.HANDED_OVER) {
                // from an end: the shell failed before it published the terminal event
                table.add(new Transition(from, Why.GATEWAY_ERROR, State.FAILED));
            }
        }
        TRANSITIONS = Set.copyOf(table);
    }

    /** What the machine learns. */
    public sealed interface Input {
        /** The running model call's items emitted this payload (the provider streams). */
        record Streamed(StreamPayload payload) implements Input {
        }

        /**
         * The model call of {@link Output.CallModel} returned.
         *
         * @param cancelled the turn's cancel reason when it was cancelled meanwhile, else null
         */
        record CallEnded(StepOutcome outcome, String cancelled) implements Input {
        }

        /** The compaction of {@link Output.Compact} ended. */
        record Compacted(ConversationCompactor.Result result, String cancelled) implements Input {
        }

        /** The executor's result of a call. */
        record Result(ToolResult result) implements Input {
        }

        /** The executor started a call at {@code at} (epoch ms). */
        record Started(String callId, long at) implements Input {
        }

        /** The executor asks a person to approve a call. */
        record ApprovalAsked(String callId) implements Input {
        }

        /** The turn is cancelled; {@code reason} may be null. */
        record Cancel(String reason) implements Input {
        }

        /** The owner's partition is revoked: the turn goes on at another gateway from its next step boundary. */
        record Handover() implements Input {
        }

        /** A write of the turn failed: it stops at the end of the step (continuing would spend tokens nobody sees). */
        record PublishFailed() implements Input {
        }

        /** Time passed: the machine reads the clock. */
        record Tick() implements Input {
        }
    }

    /** What the shell does, in order. */
    public sealed interface Output {
        /** Publish one raw event of the turn. */
        record Publish(StreamPayload payload) implements Output {
        }

        /** Record a completed step (see {@link TurnProgress#checkpoint}). */
        record Checkpoint(int step, JsonNode checkpoint) implements Output {
        }

        /** These writes ({@link Publish}, {@link Checkpoint}) commit in one transaction. */
        record Together(List<Output> writes) implements Output {
        }

        /** Approve the call on {@code llm.control}: its tool is allowed for the rest of the thread. */
        record Approve(String callId) implements Output {
        }

        /** A step begins (for its span and time to first token). */
        record StepStarting(int step) implements Output {
        }

        /**
         * Call the model, streaming into {@code items}: feed each payload they emit meanwhile as
         * {@link Input.Streamed}, then {@link Input.CallEnded}.
         */
        record CallModel(int step, int attempt, String model, ModelRequest request, StepItems items) implements Output {
        }

        /** Compact the conversation with a summarisation call on {@code model}; feed {@link Input.Compacted}. */
        record Compact(int step, String model, List<Conversation.Entry> entries, String idPrefix) implements Output {
        }

        /** The step's call ended (after its retries and compactions). */
        record StepCalled(int step, String model, StepOutcome outcome) implements Output {
        }

        /**
         * A model call used this (priced), as the turn's usage counts it: a step's, a summarising call's, or one that
         * failed (made again, or ending the step), whose usage is reported apart.
         */
        record Spent(String model, Usage usage, boolean failed) implements Output {
        }

        /** Feed these calls' results, start markers and approval asks. */
        record AwaitTools(List<ToolCallRequest> calls) implements Output {
        }

        /** A call's wait ended: with the executor's result, or (result null) without one, as {@code endedAs}. */
        record ToolEnded(ToolCallRequest call, ToolResult result, String endedAs) implements Output {
        }

        /** Count a metric. */
        record Count(Counter counter) implements Output {
        }

        /** Stop the turn's work in flight: cancel its signal. */
        record CancelTurn(String reason) implements Output {
        }

        /** Nothing to do until {@code at} (epoch ms) unless an input comes: then feed it, else a {@link Input.Tick}. */
        record WaitUntil(long at) implements Output {
        }

        /** The turn ended here (its terminal event, if any, is published already). */
        record Ended(State how, ResponseStatus status, String finishReason) implements Output {
        }
    }

    private final AgentLoop.Turn turn;
    private final TurnProgress progress;
    private final LoopConfig config;
    private final ThreadAllowances allowances;
    private final Clock clock;
    private final RandomGenerator random;
    /** Where the items of a running model call emit: the shell feeds each payload back as {@link Input.Streamed}. */
    private final StepItems.Sink streaming;
    private final UsageLedger usage;
    private final MaxTokensContinuation continuation;
    private final TurnStatusReporter reporter = new TurnStatusReporter(this::publish);
    private final Conversation conversation;
    /** The offered tools declared read-only that the executor runs: their calls start while the model streams. */
    private final Set<String> readOnlyTools;
    private final TurnProgress.Interrupted interrupted;

    private State state = State.STARTING;
    /** The transitions this turn took, in order (the simulation reports how much of the table its schedules cover). */
    private final List<Transition> taken = new ArrayList<>();
    /** What the input being handled makes the shell do; null between inputs. */
    private List<Output> out;
    private String model;
    private int step;
    private String cancelReason;
    private boolean cancelled;
    private boolean handoverPending;
    private boolean publishFailed;

    // the step being called
    private StepAttempts attempts;
    /** The attempts of the compaction's summarising call while it runs (its backoff included), else null. */
    private StepAttempts summarising;
    /** The summarising call's latest failed result. */
    private ConversationCompactor.Result summaryFailed;
    private StepItems items;
    private List<Conversation.Entry> stepEntries;
    private boolean compactedThisStep;
    /** The outcome of the call the provider refused as too long while its compaction runs; null for one before the call. */
    private StepOutcome overflowed;
    private long retryAt;
    /** The latest attempt's items of step {@link #lastStep}: a later call of the same step names its items after them. */
    private StepItems lastItems;
    private int lastStep;
    /** The message a {@code max_tokens} step left open: the next step's first message joins it. */
    private StepItems.Carried carried;
    /** The carried message was written into by the attempt a stopped gateway was streaming. */
    private boolean carriedTouched;
    /** The context the last step filled, or null when unknown (no step yet, no usage, or compacted since). */
    private Long lastUsed;
    /** A model step's latest {@code item_done}, not published yet (see {@link #streamed}). */
    private StreamPayload heldBack;
    /** Calls whose {@code item_done} went out while their step streamed (read-only tools): released already. */
    private final Set<String> releasedEarly = new HashSet<>();

    // the tool round being awaited
    private ToolRound round;
    private List<ToolCallRequest> roundCalls;
    private Map<String, Conversation.ToolOutput> roundOutputs;
    /** A cancel or handover came before the round started: it ends the round at its first tick, after what came. */
    private boolean roundStopPending;
    /**
     * The round's step called tools the caller runs itself (still open: no {@code item_done}): the turn returns
     * them once the others are answered; a turn that ends otherwise closes them, each with an output.
     */
    private List<ToolCallRequest> clientCalls = List.of();
    /** A call of the step being awaited was denied. */
    private boolean denied;

    /**
     * @param progress where the turn starts: at the beginning, or where another gateway left it
     * @param allowances the tools allowed for the rest of their thread: their asks are approved
     * @param clock the turn's time: event stamps, deadlines
     * @param random draws the backoff's jitter
     * @param streaming where a running model call's items emit (the shell feeds each back as {@link Input.Streamed})
     */
    public LoopMachine(AgentLoop.Turn turn, TurnProgress progress, LoopConfig config, ThreadAllowances allowances,
                       Clock clock, RandomGenerator random, StepItems.Sink streaming) {
        this.turn = turn;
        this.progress = progress;
        this.config = config;
        this.allowances = allowances;
        this.clock = clock;
        this.random = random;
        this.streaming = streaming;
        this.usage = new UsageLedger(config.prices(), progress.usage(), progress.failedUsage());
        this.continuation = new MaxTokensContinuation(progress.continuations());
        this.conversation = new Conversation(turn.conversation());
        this.model = progress.model();
        this.interrupted = progress.interrupted();
        this.carried = progress.carried();
        this.carriedTouched = progress.carriedTouched();
        this.readOnlyTools = turn.tools().stream().filter(ToolDefinition::readOnly).map(ToolDefinition::name)
                .filter(name -> !turn.clientTools().contains(name)).collect(Collectors.toSet());
    }

    public State state() {
        return state;
    }

    /** The transitions taken so far, in order. */
    public List<Transition> taken() {
        return List.copyOf(taken);
    }

    /** The turn's usage so far, or null. */
    public Usage usage() {
        return usage.total();
    }

    /** The model calls go to now: the turn's model, or the fallback model once it fell back. */
    public String model() {
        return model;
    }

    /**
     * Publishes the turn's start, or resumes where the turn's previous gateway left it. A cancel or handover fed
     * before (it came before the turn ran here: a takeover found the cancel on {@code llm.control}) ends it at once.
     */
    public List<Output> start() {
        return handle(() -> {
            if (progress.started()) {
                LOG.info("turn resumed at step {}: run {}, thread {}, provider {}, model {}", progress.nextStep(),
                        turn.runId(), turn.threadId(), turn.provider().name(), model);
            } else {
                LOG.info("turn started: run {}, thread {}, provider {}, model {}, up to {} steps", turn.runId(),
                        turn.threadId(), turn.provider().name(), model, turn.maxSteps());
                publish(new StreamPayload.ResponseStart(turn.runId(), turn.turnId(), turn.threadId(), null, model,
                        turn.provider().name(), clock.millis(), turn.tenantId()));
            }
            publishUserPrompt();
            progress.completed().forEach(conversation::add);
            step = progress.nextStep();
            if (handoverPending) {
                handedOver(Why.HANDOVER);
                return;
            }
            if (cancelled) {
                cancelledBeforeRunning(progress.awaiting());
                return;
            }
            if (progress.finishReason() != null) {
                done(Why.ALREADY_ENDED, progress.finishReason());
                return;
            }
            TurnProgress.Awaiting awaiting = progress.awaiting();
            if (awaiting == null) {
                beginStep(Why.CALL_STEP);
                return;
            }
            // a denial the previous owner published ends the turn as one that arrives here does
            denied = !awaiting.denied().isEmpty();
            release(executorCalls(awaiting.unreleased()));
            awaitTools(awaiting.step(), executorCalls(awaiting.calls()), clientCalls(awaiting.unreleased()),
                    awaiting.published(), Why.RESUMED_AWAITING);
        });
    }

    public List<Output> on(Input input) {
        return handle(() -> {
            if (input instanceof Input.Cancel cancel) {
                cancelled = true;
                cancelReason = cancel.reason() != null ? cancel.reason() : cancelReason;
            } else if (input instanceof Input.Handover) {
                handoverPending = true;
            } else if (input instanceof Input.PublishFailed) {
                publishFailed = true;
            } else if (input instanceof Input.CallEnded ended) {
                noteCancel(ended.cancelled());
            } else if (input instanceof Input.Compacted compacted) {
                noteCancel(compacted.cancelled());
            }
            switch (state) {
                case CALLING -> calling(input);
                case BACKING_OFF -> backingOff(input);
                case COMPACTING -> compacting(input);
                case AWAITING_TOOLS -> awaiting(input);
                default -> {
                    // nothing happens before the start or after the end
                }
            }
        });
    }

    /**
     * A turn cancelled before it ran here: nothing more runs. A call not released yet never reaches the executor;
     * the released ones get their outputs (the cancel answers those still out); what an earlier owner's attempt
     * at the next step left open is closed.
     */
    private void cancelledBeforeRunning(TurnProgress.Awaiting awaiting) {
        if (awaiting != null) {
            // the client-side calls, never released, are closed with the executor's calls not released yet
            List<ToolCallRequest> unreleased = awaiting.unreleased();
            abandon(unreleased, UnansweredCall.aborted(cancelReason));
            List<ToolCallRequest> released = executorCalls(awaiting.calls()).stream()
                    .filter(call -> !unreleased.contains(call)).toList();
            if (!released.isEmpty()) {
                awaitTools(awaiting.step(), released, List.of(), awaiting.published(), Why.RESUMED_AWAITING);
                return;
            }
        }
        closeFailedStep(StepOutcome.abortedBeforeStream());
        aborted();
    }

    /**
     * The gateway failed while running the turn (a bug, a write that threw), before it performed the machine's
     * {@link Output.Ended}, if the machine ended: the turn ends with {@code INTERNAL}, its held-back event published
     * first. As when a step fails, what the step left open is closed and every call it released or awaits gets an
     * output. (Failing in {@link State#STARTING}, it has shown nothing yet.) A machine that ended already had its
     * terminal event, the last output before its end, not published: it ends with {@code INTERNAL} instead, a call
     * it returned to the caller closed; a turn handed over stays so (the next owner goes on from what was written),
     * and one that failed inside already fails no more. A call whose last {@code tool_status} (completed, error or
     * aborted) is among the outputs {@code notPerformed} (its output's {@code item_done} threw before it, say) ends
     * {@code error} with that {@code INTERNAL} error: otherwise it would stay {@code running} for good.
     */
    public List<Output> failedInside(String what, List<Output> notPerformed) {
        if (state == State.HANDED_OVER || state.ended() && taken.get(taken.size() - 1).why() == Why.GATEWAY_ERROR) {
            return List.of();
        }
        return handle(() -> {
            ErrorInfo error = ErrorInfo.of(ErrorCodes.INTERNAL, "the gateway failed while running the turn: " + what);
            long now = clock.millis();
            endsNotShown(notPerformed).forEach(end -> publish(new StreamPayload.ToolStatus(end.itemId(), end.callId(),
                    end.toolName(), ToolState.ERROR, end.startedAt(), now, error)));
            UnansweredCall why = new UnansweredCall(ToolState.ABORTED, error, "aborted: the gateway failed");
            switch (state) {
                case CALLING -> {
                    closeFailedStep(StepOutcome.refused(error, false, false, null, 0));
                    abandon(items.toolCalls(), why);
                }
                case BACKING_OFF, COMPACTING -> closeFailedStep(StepOutcome.refused(error, false, false, null, 0));
                case AWAITING_TOOLS -> {
                    roundOutputs(round.on(new ToolRound.Input.Fail(why)));
                    abandonClientCalls(why);
                }
                case COMPLETE -> abandonClientCalls(why);
                default -> {
                    // starting: nothing shown yet; aborted or failed: what the turn showed is closed already
                }
            }
            failed(Why.GATEWAY_ERROR, error);
        });
    }

    /** The final {@code tool_status} of each call among {@code outputs}, those of groups included. */
    private static List<StreamPayload.ToolStatus> endsNotShown(List<Output> outputs) {
        List<StreamPayload.ToolStatus> ends = new ArrayList<>();
        for (Output output : outputs) {
            if (output instanceof Output.Together together) {
                ends.addAll(endsNotShown(together.writes()));
            } else if (output instanceof Output.Publish publish && publish.payload() instanceof StreamPayload.ToolStatus status
                    && (status.status() == ToolState.COMPLETED || status.status() == ToolState.ERROR
                    || status.status() == ToolState.ABORTED)) {
                ends.add(status);
            }
        }
        return ends;
    }

    private List<Output> handle(Runnable work) {
        List<Output> outputs = new ArrayList<>();
        out = outputs;
        try {
            work.run();
            if (state == State.BACKING_OFF) {
                outputs.add(new Output.WaitUntil(retryAt));
            } else if (state == State.AWAITING_TOOLS) {
                outputs.add(new Output.WaitUntil(roundStopPending ? clock.millis() : round.deadline()));
            }
        } finally {
            out = null;
        }
        return outputs;
    }

    private void noteCancel(String reason) {
        if (reason != null) {
            cancelled = true;
            cancelReason = reason;
        }
    }

    private void go(Why why, State to) {
        Transition transition = new Transition(state, why, to);
        if (!TRANSITIONS.contains(transition)) {
            throw new IllegalStateException("the loop has no transition " + transition);
        }
        taken.add(transition);
        state = to;
    }

    // ---- steps

    /** A step boundary: the next step's call ({@code why}), unless the turn ends or is handed over here. */
    private void beginStep(Why why) {
        if (step > turn.maxSteps() + continuation.count()) {
            LOG.info("turn reached its limit of {} steps", turn.maxSteps());
            done(Why.STEP_LIMIT, FinishReasons.MAX_STEPS);
            return;
        }
        if (handoverPending) {
            handedOver(Why.HANDOVER);
            return;
        }
        if (cancelled) {
            // cancelled before this step (it came as the last one ended): the model is not called, and what an
            // earlier owner's attempt at the step left open is closed
            closeFailedStep(StepOutcome.abortedBeforeStream());
            aborted();
            return;
        }
        out.add(new Output.StepStarting(step));
        compactedThisStep = false;
        overflowed = null;
        if (lastUsed != null && config.compaction().nearlyFull(model, lastUsed)) {
            compact(lastUsed, Why.NEARLY_FULL);
            return;
        }
        callStep(why);
    }

    /** The step's call on the conversation as it is now: its first attempt. */
    private void callStep(Why why) {
        items = firstAttemptItems(step);
        stepEntries = conversation.entries();
        attempts = new StepAttempts(model, turn.fallbackModel(), config.retry(), random);
        attemptOutputs(attempts.start(), why);
    }

    /** Performs what the step's attempts say; {@code why} names the move to a call, if one is made. */
    private void attemptOutputs(List<StepAttempts.Output> outputs, Why why) {
        for (StepAttempts.Output output : outputs) {
            if (output instanceof StepAttempts.Output.Call call) {
                model = call.model();
                items.withdrawOnRetryableFailure(call.withdrawOnFailure());
                go(why, State.CALLING);
                out.add(new Output.Count(Counter.MODEL_CALLS));
                reporter.callStarting(call.attempt());
                out.add(new Output.CallModel(step, call.attempt(), model, new ModelRequest(model, turn.system(),
                        stepEntries, turn.tools(), config.maxTokens(), config.thinkingBudget()), items));
            } else if (output instanceof StepAttempts.Output.Withdrawn withdrawn) {
                spent(withdrawn.model(), withdrawn.usage(), true);
                items = items.nextAttempt();
                lastItems = items;
            } else if (output instanceof StepAttempts.Output.Ended ended) {
                if (ended.gaveUp() != null) {
                    LOG.warn("step {}: {}", step, ended.gaveUp());
                }
                callEnded(ended.outcome());
            } else {
                attemptReported(output, "step " + step);
            }
        }
    }

    /**
     * What a call's attempts report alike, a step's call or a compaction's summarising call ({@code what}): the
     * failures, fallbacks and retries counted and shown, and the move to the backoff.
     */
    private void attemptReported(StepAttempts.Output output, String what) {
        if (output instanceof StepAttempts.Output.Failed failed) {
            out.add(new Output.Count(Counter.PROVIDER_ERRORS));
            LOG.warn("{} attempt {} with model {} failed: {}: {}", what, failed.attempt(), failed.model(),
                    failed.error().code(), failed.error().message());
        } else if (output instanceof StepAttempts.Output.Stalled stalled) {
            out.add(new Output.Count(Counter.STALLS));
            reporter.stalled(stalled.error());
        } else if (output instanceof StepAttempts.Output.FellBack fellBack) {
            LOG.warn("model {} failed ({}); falling back to {} for the rest of the turn", fellBack.from(),
                    fellBack.error().code(), fellBack.to());
            out.add(new Output.Count(Counter.FALLBACKS));
            reporter.fallback(fellBack.from(), fellBack.to(), fellBack.error());
        } else if (output instanceof StepAttempts.Output.Retrying retrying) {
            out.add(new Output.Count(Counter.RETRIES));
            reporter.retrying(retrying.nextAttempt(), retrying.delay(), retrying.error());
            LOG.warn("retrying {} in {} ms (retry {} of {})", what, retrying.delay().toMillis(),
                    retrying.nextAttempt() - 1, config.retry().maxAttempts() - 1);
        } else if (output instanceof StepAttempts.Output.WaitUntil wait) {
            retryAt = wait.at();
            if (state != State.BACKING_OFF) {
                go(Why.BACKOFF, State.BACKING_OFF);
            }
        }
    }

    private void calling(Input input) {
        if (input instanceof Input.Streamed streamed) {
            streamed(streamed.payload());
        } else if (input instanceof Input.CallEnded ended) {
            attemptOutputs(attempts.on(new StepAttempts.Input.AttemptEnded(ended.outcome(), items.withdrawn(),
                    cancelled, clock.millis())), Why.RETRY);
        }
    }

    private void backingOff(Input input) {
        if (summarising != null) {
            if (input instanceof Input.Handover && !cancelled) {
                handedOverWhileCompacting();
            } else if (input instanceof Input.Cancel) {
                summarisingOutputs(summarising.on(new StepAttempts.Input.Cancel()), Why.BACKOFF_OVER);
            } else if (input instanceof Input.Tick) {
                summarisingOutputs(summarising.on(new StepAttempts.Input.Tick(clock.millis())), Why.BACKOFF_OVER);
            }
            return;
        }
        if (input instanceof Input.Cancel) {
            attemptOutputs(attempts.on(new StepAttempts.Input.Cancel()), Why.BACKOFF_OVER);
        } else if (input instanceof Input.Tick) {
            attemptOutputs(attempts.on(new StepAttempts.Input.Tick(clock.millis())), Why.BACKOFF_OVER);
        }
    }

    /** The step's attempts ended: a prompt too long is compacted and called again, once. */
    private void callEnded(StepOutcome outcome) {
        if (ContextWindows.overflowed(outcome)) {
            if (compactedThisStep) {
                stepEnded(tooLong(outcome, "even after compacting it"));
                return;
            }
            overflowed = outcome;
            compact(config.compaction().windows().overflowTokens(model, outcome.error()), Why.PROMPT_TOO_LONG);
            return;
        }
        lastUsed = outcome.status() == ResponseStatus.COMPLETE && outcome.usage() != null
                ? ContextWindows.used(outcome.usage()) : null;
        stepEnded(outcome);
    }

    // ---- compaction

    private void compact(long used, Why why) {
        long window = config.compaction().windows().of(model);
        LOG.info("step {}: the context holds {} of {} tokens for model {}; compacting the conversation", step, used,
                window, model);
        reporter.compacting(used, window);
        summarising = new StepAttempts(model, turn.fallbackModel(), config.retry(), random);
        summarisingOutputs(summarising.start(), why);
    }

    /** Performs what the summarising call's attempts say; {@code why} names the move to a call, if one is made. */
    private void summarisingOutputs(List<StepAttempts.Output> outputs, Why why) {
        for (StepAttempts.Output output : outputs) {
            if (output instanceof StepAttempts.Output.Call call) {
                model = call.model();
                go(why, State.COMPACTING);
                // its items are read by the compactor, never published: each attempt may use the same ids
                out.add(new Output.Compact(step, model, conversation.entries(),
                        StepItemIds.summaryPrefix(turn.runId(), step)));
            } else if (output instanceof StepAttempts.Output.Ended ended) {
                if (ended.gaveUp() != null) {
                    LOG.warn("step {}: compacting: {}", step, ended.gaveUp());
                }
                compactionEnded(ended.outcome().status() == ResponseStatus.ABORTED
                        ? new ConversationCompactor.Result(ended.outcome(), null, conversation.entries(), 0)
                        : summaryFailed);
            } else if (!(output instanceof StepAttempts.Output.Withdrawn)) {
                // (a withdrawn attempt's usage was counted as its result came)
                attemptReported(output, "step " + step + "'s summarising call");
            }
        }
    }

    private void compacting(Input input) {
        if (!(input instanceof Input.Compacted compacted)) {
            return;
        }
        ConversationCompactor.Result result = compacted.result();
        spent(model, result.outcome().usage(), result.outcome().status() == ResponseStatus.ERROR);
        if (handoverPending && !cancelled && !result.aborted()) {
            handedOverWhileCompacting();
            return;
        }
        if (result.succeeded() || result.aborted()) {
            compactionEnded(result);
            return;
        }
        // nothing of the summarising call is published, so there is nothing to withdraw before it is retried
        summaryFailed = result;
        summarisingOutputs(summarising.on(new StepAttempts.Input.AttemptEnded(result.outcome(), true, cancelled,
                clock.millis())), Why.RETRY);
    }

    /** The compaction ended, after its attempts: the step is called, on the compacted conversation if it succeeded. */
    private void compactionEnded(ConversationCompactor.Result result) {
        summarising = null;
        summaryFailed = null;
        if (result.succeeded()) {
            out.add(new Output.Count(Counter.COMPACTIONS));
            conversation.replace(result.conversation());
            lastUsed = null;
            compactedThisStep = true;
            // the time keeps the id unique when a gateway that takes the turn over compacts the same step again
            publishSummary(StepItemIds.compaction(turn.runId(), step, clock.millis()), result.summary());
            LOG.info("step {}: {} entries of the conversation summarised; {} kept", step, result.summarised(),
                    result.conversation().size() - 1);
        } else if (!result.aborted()) {
            LOG.warn("step {}: compacting the conversation failed: {}: {}", step, result.error().code(),
                    result.error().message());
        }
        if (result.aborted() || cancelled) {
            // cancelled while it summarised: the step is not called
            stepEnded(StepOutcome.abortedBeforeStream());
        } else if (overflowed != null && !result.succeeded()) {
            stepEnded(tooLong(overflowed, "and compacting it failed (" + result.error().code() + ": "
                    + result.error().message() + ")"));
        } else {
            callStep(Why.COMPACTION_ENDED);
        }
    }

    /**
     * A handover came while the conversation was compacted: it takes effect before the compaction's next model call
     * (the step's, or its summarising call again). The next owner compacts again (a checkpoint carries no
     * compaction), so a summary made here is not shown; the summarising calls' usage was counted in the metrics
     * but is not in the turn's usage, which only a step's checkpoint carries to the next owner.
     */
    private void handedOverWhileCompacting() {
        LOG.info("step {}: handed over while compacting the conversation, before its next model call", step);
        handedOver(Why.HANDOVER_WHILE_COMPACTING);
    }

    private void publishSummary(String id, String summary) {
        // together: a gateway that takes the turn over names its own summary, so a half-published one would stay open
        together(() -> {
            publish(new StreamPayload.ItemStart(id, ItemType.MESSAGE, null, null, null, null, Origins.COMPACTION));
            publish(new StreamPayload.ItemDone(id, new OutputItem(id, ItemType.MESSAGE, summary, Origins.COMPACTION,
                    null, null, null, null, null, turn.provider().name())));
        });
    }

    private StepOutcome tooLong(StepOutcome outcome, String why) {
        ErrorInfo error = ErrorInfo.of(ErrorCodes.CONTEXT_OVERFLOW, "the conversation does not fit the context window of "
                + model + " (" + config.compaction().windows().of(model) + " tokens) " + why + ": "
                + outcome.error().message());
        LOG.warn("{}", error.message());
        return StepOutcome.refused(error, false, false, null, outcome.itemsPublished());
    }

    // ---- a step's end

    private void stepEnded(StepOutcome outcome) {
        out.add(new Output.StepCalled(step, model, outcome));
        Usage used = spent(model, outcome.usage(), outcome.status() == ResponseStatus.ERROR);
        if (publishFailed) {
            out.add(new Output.CancelTurn("events cannot be published"));
            end(Why.UNPUBLISHABLE, State.FAILED, ResponseStatus.ERROR, null);
            return;
        }
        switch (outcome.status()) {
            case ABORTED -> {
                closeFailedStep(outcome);
                abandon(outcome.toolCalls(), UnansweredCall.aborted(cancelReason));
                aborted();
                return;
            }
            case ERROR -> {
                closeFailedStep(outcome);
                abandon(outcome.toolCalls(), new UnansweredCall(ToolState.ABORTED, outcome.error(),
                        "aborted: the model call failed"));
                failed(Why.STEP_FAILED, outcome.error());
                return;
            }
            default -> {
                // complete: go on
            }
        }
        Usage stepUsage = used;
        int current = step;
        LOG.info("step {} complete: finish reason {}, {} tool call(s)", step, outcome.finishReason(),
                outcome.toolCalls().size());
        conversation.add(new Conversation.AssistantNative(outcome.assistantContent()));
        boolean continued = outcome.toolCalls().isEmpty() && continuation.shouldContinue(outcome.finishReason());
        StepItems.Carried carrying = continued ? carryLastMessage() : null;
        // the step's held-back last event and its checkpoint commit together: a reader that sees the step
        // complete sees its checkpoint, so a gateway that takes the turn over never calls it again
        together(() -> {
            flushHeldBack();
            if (stepUsage != null) {
                reporter.stepCompleted(current, model, stepUsage);
            }
            out.add(new Output.Checkpoint(current, TurnProgress.checkpoint(model, usage.total(), usage.failed(),
                    outcome, continued, carrying)));
        });
        List<ToolCallRequest> executorCalls = executorCalls(outcome.toolCalls());
        release(executorCalls);
        step++;
        if (continued) {
            LOG.info("step {} stopped at the output token limit; asking the model to continue", current);
            carried = carrying;
            reporter.continuing();
            conversation.add(new Conversation.UserText(MaxTokensContinuation.PROMPT));
            beginStep(Why.CONTINUE);
            return;
        }
        if (outcome.toolCalls().isEmpty()) {
            done(Why.FINAL_ANSWER, outcome.finishReason());
            return;
        }
        awaitTools(current, executorCalls, clientCalls(outcome.toolCalls()), Map.of(), Why.TOOL_CALLS);
    }

    /**
     * The step ended without completing (failed or cancelled, maybe before its first call): what its last
     * attempt left open is closed, a message carried from a continued step with its text.
     */
    private void closeFailedStep(StepOutcome outcome) {
        StepItems last = lastItems != null && lastStep == step ? lastItems : firstAttemptItems(step);
        if (outcome.status() == ResponseStatus.ABORTED) {
            last.cancelAll();
        } else {
            last.failAll(outcome.error());
        }
    }

    /**
     * A new step's items; for the step another gateway was streaming when it stopped, what it had
     * shown is withdrawn first, and the call starts over with the ids after it.
     */
    private StepItems firstAttemptItems(int number) {
        String ids = StepItemIds.stepPrefix(turn.runId(), number);
        if (lastItems == null || lastStep != number) {
            lastStep = number;
            StepItems.Carried carrying = carried;
            boolean touched = carriedTouched;
            carried = null;
            carriedTouched = false;
            boolean wasStreaming = interrupted != null && interrupted.step() == number;
            StepItems.Sink sink = this::fromItems;
            if (!wasStreaming && !touched) {
                lastItems = new StepItems(ids, turn.provider().name(), sink).startingEarly(readOnlyTools)
                        .carrying(carrying, false);
                return lastItems;
            }
            LOG.info("step {} was streaming when the turn's previous gateway stopped; calling the model again", number);
            lastItems = (wasStreaming ? StepItems.resumed(ids, turn.provider().name(), sink, interrupted.nextItem(),
                    interrupted.shown()) : new StepItems(ids, turn.provider().name(), sink)).startingEarly(readOnlyTools)
                    .carrying(carrying, touched);
            lastItems.withdraw();
        }
        // the step is called again (after a compaction): each call's items go on after the last call's
        lastItems = lastItems.nextAttempt();
        return lastItems;
    }

    /**
     * A step's items emit: while the machine handles an input (it closed or withdrew them) the payload is
     * its own; otherwise the provider streams, and the shell feeds it back as {@link Input.Streamed}.
     */
    private void fromItems(StreamPayload payload) {
        if (out != null) {
            streamed(payload);
        } else {
            streaming.emit(payload);
        }
    }

    /**
     * A model step's payload, holding back each {@code item_done} until the next payload: the step's last
     * one goes out with its checkpoint. An item is done to a reader only when the step may be; its text is
     * all there meanwhile.
     */
    private void streamed(StreamPayload payload) {
        flushHeldBack();
        if (payload instanceof StreamPayload.ItemDone done && done.finalItem() != null
                && done.finalItem().knownType() == ItemType.FUNCTION_CALL) {
            releasedEarly.add(done.itemId());
        }
        if (payload instanceof StreamPayload.ItemDone) {
            heldBack = payload;
        } else {
            publish(payload);
        }
    }

    /**
     * A step cut off at the output token limit whose last item is a message leaves it open: its held-back
     * {@code item_done} is dropped, and the continuation's text joins the same item.
     */
    private StepItems.Carried carryLastMessage() {
        if (heldBack instanceof StreamPayload.ItemDone done && done.finalItem() != null
                && done.finalItem().knownType() == ItemType.MESSAGE) {
            heldBack = null;
            return new StepItems.Carried(done.itemId(), done.finalItem().content() == null ? ""
                    : done.finalItem().content(), true);
        }
        return null;
    }

    // ---- tools

    /**
     * The calls the tool executor runs: all but those of client-side tools, which get no {@code item_done}
     * (so never reach {@code llm.tool-calls}; the topology completes them, with their streamed arguments,
     * when the turn closes) and are answered by the caller's next request.
     */
    private List<ToolCallRequest> executorCalls(List<ToolCallRequest> calls) {
        return calls.stream().filter(call -> !turn.clientTools().contains(call.name())).toList();
    }

    /** The calls of tools the caller runs itself. */
    private List<ToolCallRequest> clientCalls(List<ToolCallRequest> calls) {
        return calls.stream().filter(call -> turn.clientTools().contains(call.name())).toList();
    }

    /**
     * Publishes the {@code item_done} of a committed step's calls, which routes them to the tool
     * executor. Sent after the step's checkpoint on the same transactional producer, so a call is
     * never visible to the executor unless its step is committed (see {@link StepItems}).
     */
    private void release(List<ToolCallRequest> calls) {
        calls.stream().filter(call -> !releasedEarly.contains(call.itemId()))
                .forEach(call -> publish(call.itemDone(turn.provider().name())));
    }

    /**
     * Waits for the executor's calls of step {@code number}; with none, the turn goes on at once (it returns
     * {@code clientCalls}, the step's open client-side calls, to the caller).
     */
    private void awaitTools(int number, List<ToolCallRequest> executorCalls, List<ToolCallRequest> clientCalls,
                            Map<String, Conversation.ToolOutput> published, Why why) {
        this.clientCalls = clientCalls;
        if (executorCalls.isEmpty()) {
            afterTools();
            return;
        }
        go(why, State.AWAITING_TOOLS);
        round = new ToolRound(turn.runId(), number, executorCalls, published.keySet(), clock.millis(),
                config.toolResultTimeout());
        roundCalls = executorCalls;
        roundOutputs = new LinkedHashMap<>(published);
        out.add(new Output.AwaitTools(executorCalls.stream().filter(call -> !published.containsKey(call.callId()))
                .toList()));
        roundOutputs(round.start());
        // what came before the round ends it at its first tick: the calls' inputs already there come first
        roundStopPending = state == State.AWAITING_TOOLS && (cancelled || handoverPending);
    }

    private void awaiting(Input input) {
        ToolRound.Input next;
        if (input instanceof Input.Result result) {
            next = new ToolRound.Input.Result(result.result());
        } else if (input instanceof Input.Started started) {
            next = new ToolRound.Input.Started(started.callId(), started.at());
        } else if (input instanceof Input.ApprovalAsked asked) {
            next = new ToolRound.Input.ApprovalAsked(asked.callId());
        } else if (input instanceof Input.Cancel cancel) {
            next = new ToolRound.Input.Cancel(cancel.reason() != null ? cancel.reason() : cancelReason);
        } else if (input instanceof Input.Handover) {
            next = new ToolRound.Input.Handover();
        } else if (input instanceof Input.Tick && roundStopPending) {
            next = cancelled ? new ToolRound.Input.Cancel(cancelReason) : new ToolRound.Input.Handover();
        } else if (input instanceof Input.Tick) {
            next = new ToolRound.Input.Tick(clock.millis());
        } else {
            return;
        }
        if (next instanceof ToolRound.Input.Cancel || next instanceof ToolRound.Input.Handover) {
            roundStopPending = false;
        }
        roundOutputs(round.on(next));
    }

    /** Shows a call's status, or publishes its output; at the round's end, goes on. */
    private void roundOutputs(List<ToolRound.Output> outputs) {
        for (ToolRound.Output output : outputs) {
            if (output instanceof ToolRound.Output.AwaitingApproval asked) {
                reporter.toolAwaitingApproval(asked.call());
                if (allowances.allows(turn.tenantId(), turn.threadId(), asked.call().name())) {
                    LOG.info("call {} of {}: the tool is allowed for the rest of the thread; approving it",
                            asked.call().callId(), asked.call().name());
                    out.add(new Output.Approve(asked.call().callId()));
                }
            } else if (output instanceof ToolRound.Output.Running running) {
                reporter.toolRunning(running.call(), running.at() != null ? running.at() : clock.millis());
            } else if (output instanceof ToolRound.Output.Answered answered) {
                ToolResult result = answered.result();
                if (result.error() != null && ErrorCodes.TOOL_CALL_DENIED.equals(result.error().code())) {
                    denied = true;
                }
                out.add(new Output.ToolEnded(answered.call(), result, null));
                // together: the status says why the call failed (a denial), which a gateway taking the turn over reads
                together(() -> {
                    roundOutputs.put(answered.call().callId(), publishOutput(answered.outputId(), answered.call(), result));
                    reporter.toolFinished(answered.call(), result);
                });
            } else if (output instanceof ToolRound.Output.Unanswered unanswered) {
                endWithoutResult(unanswered.outputId(), unanswered.call(), unanswered.startedAt(), unanswered.why());
            } else if (output instanceof ToolRound.Output.Ended ended) {
                switch (ended.how()) {
                    case ANSWERED -> {
                        List<Conversation.ToolOutput> ordered = new ArrayList<>();
                        roundCalls.forEach(call -> ordered.add(roundOutputs.get(call.callId())));
                        conversation.add(new Conversation.ToolOutputs(ordered));
                        afterTools();
                    }
                    case TIMED_OUT -> {
                        abandonClientCalls(new UnansweredCall(ToolState.ABORTED, ended.error(),
                                "aborted: the turn failed"));
                        failed(Why.TOOL_TIMEOUT, ended.error());
                    }
                    case CANCELLED -> aborted();
                    case HANDED_OVER -> handedOver(Why.HANDOVER);
                    case FAILED -> {
                        // fed by failedInside, which ends the turn
                    }
                }
            }
        }
    }

    /**
     * The step's calls are answered: a denial ends the turn unless the gateway is set to go on
     * ({@code turnstream.gateway.approvals.on-deny=continue}), and the turn returns a client-side call to its caller.
     */
    private void afterTools() {
        if (cancelled) {
            // the cancel came before the round and its calls were answered first: nothing more runs
            closeFailedStep(StepOutcome.abortedBeforeStream());
            aborted();
            return;
        }
        if (denied && config.onDeny() == LoopConfig.OnDeny.STOP) {
            LOG.info("a tool call was denied; the turn stops without calling the model again");
            // the turn stops because of the denial: a client-side call of the step is not returned to be run
            abandonClientCalls(UnansweredCall.aborted(DENIAL_STOPS_THE_TURN));
            done(Why.DENIED, FinishReasons.TOOL_DENIED);
            return;
        }
        if (!clientCalls.isEmpty()) {
            LOG.info("step {} called a client-side tool: the turn returns the call to the caller", step - 1);
            done(Why.CLIENT_TOOL, FinishReasons.TOOL_CALLS);
            return;
        }
        denied = false;
        beginStep(Why.RESULTS_IN);
    }

    /** The step's client-side calls are not returned to the caller: each is closed with an output saying why. */
    private void abandonClientCalls(UnansweredCall why) {
        abandon(clientCalls, why);
        clientCalls = List.of();
    }

    /** Calls of a step that failed, was cancelled or was made again: never waited for, each ends with an output. */
    private void abandon(List<ToolCallRequest> calls, UnansweredCall why) {
        // together: a gateway that takes the turn over finds the call closed and answered, or neither
        calls.forEach(call -> together(() -> {
            if (!releasedEarly.contains(call.itemId())) {
                // the call streamed whole but its item_done was held for the commit: it ends here, never released
                publish(why.error() != null ? new StreamPayload.ItemError(call.itemId(), why.error())
                        : new StreamPayload.ItemCancelled(call.itemId()));
            }
            endWithoutResult(StepItemIds.abandonedOutput(call.itemId()), call, null, why);
        }));
    }

    private void endWithoutResult(String outputId, ToolCallRequest call, Long startedAt, UnansweredCall why) {
        long now = clock.millis();
        out.add(new Output.ToolEnded(call, null, why.error() != null ? why.error().code() : why.status().wire()));
        publishOutput(outputId, call, new ToolResult(call.callId(), turn.turnId(), call.name(), false,
                TextNode.valueOf(why.output()), why.error(), startedAt == null ? 0 : startedAt, now));
        reporter.toolEnded(call, why.status(), startedAt, now, why.error());
    }

    private Conversation.ToolOutput publishOutput(String id, ToolCallRequest call, ToolResult result) {
        String name = result.toolName() != null ? result.toolName() : call.name();
        JsonNode output = result.output();
        String errorText = result.error() == null ? null : result.error().code() + ": " + result.error().message();
        if (!result.success() && (output == null || output.isNull()) && errorText != null) {
            output = TextNode.valueOf(errorText);
        }
        JsonNode shown = output;
        // together: a gateway that takes the turn over publishes the output again unless its item_done is there
        together(() -> {
            publish(new StreamPayload.ItemStart(id, ItemType.FUNCTION_CALL_OUTPUT, null, name, null, call.callId(), null));
            publish(new StreamPayload.ItemDone(id, new OutputItem(id, ItemType.FUNCTION_CALL_OUTPUT, null, null, name,
                    null, call.callId(), shown, result.success(), null)));
        });
        String text = Json.asText(output);
        return new Conversation.ToolOutput(call.callId(), name, text == null ? "" : text, result.success());
    }

    // ---- the turn's end

    private void done(Why why, String finishReason) {
        publish(new StreamPayload.ResponseDone(turn.runId(), ResponseStatus.COMPLETE, usage.total(), finishReason,
                model, usage.failed()));
        end(why, State.COMPLETE, ResponseStatus.COMPLETE, finishReason);
    }

    private void aborted() {
        LOG.info("turn cancelled: {}", cancelReason);
        // a cancel during the round of a step that also called client-side tools: nobody runs them now
        abandonClientCalls(UnansweredCall.aborted(cancelReason));
        publish(new StreamPayload.ResponseDone(turn.runId(), ResponseStatus.ABORTED, usage.total(), null, model,
                usage.failed()));
        end(Why.CANCEL, State.ABORTED, ResponseStatus.ABORTED, null);
    }

    /** Counts what a model call used (null: it reported nothing), a failed one's apart; returns it priced. */
    private Usage spent(String calledModel, Usage used, boolean failed) {
        Usage priced = failed ? usage.addFailed(calledModel, used) : usage.add(calledModel, used);
        if (priced != null) {
            out.add(new Output.Spent(calledModel, priced, failed));
        }
        return priced;
    }

    /**
     * The turn fails: its {@code response_error} carries what it used so far, as {@code response_done} does,
     * the failed calls (the one that failed it too) apart; a failed turn's tokens are spent all the same.
     */
    private void failed(Why why, ErrorInfo error) {
        publish(new StreamPayload.ResponseError(turn.runId(), error, usage.total(), usage.failed()));
        end(why, State.FAILED, ResponseStatus.ERROR, null);
    }

    /** The turn goes on at the partition's next owner: it ends here without a final event. */
    private void handedOver(Why why) {
        end(why, State.HANDED_OVER, ResponseStatus.ABORTED, null);
    }

    private void end(Why why, State how, ResponseStatus status, String finishReason) {
        go(why, how);
        out.add(new Output.Ended(how, status, finishReason));
    }

    private void publishUserPrompt() {
        String id = turn.runId() + "-user-prompt";
        if (progress.promptDone() || turn.prompt() == null) {
            return;
        }
        if (!progress.promptStarted()) {
            publish(new StreamPayload.ItemStart(id, ItemType.MESSAGE, turn.prompt(), null, null, null, Origins.USER));
        }
        publish(new StreamPayload.ItemDone(id, new OutputItem(id, ItemType.MESSAGE, turn.prompt(), Origins.USER,
                null, null, null, null, null, null)));
    }

    // ---- writes

    /** Runs {@code writes} so that what they publish commits in one transaction. */
    private void together(Runnable writes) {
        List<Output> outer = out;
        List<Output> group = new ArrayList<>();
        out = group;
        try {
            writes.run();
        } finally {
            out = outer;
        }
        outer.add(new Output.Together(group));
    }

    private void flushHeldBack() {
        if (heldBack != null) {
            StreamPayload held = heldBack;
            heldBack = null;
            publish(held);
        }
    }

    private void publish(StreamPayload payload) {
        flushHeldBack();
        out.add(new Output.Publish(payload));
    }
}
