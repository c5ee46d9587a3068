package io.turnstream.gateway.loop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.opentelemetry.context.Scope;
import io.turnstream.gateway.loop.GatewayMetrics.Counter;
import io.turnstream.gateway.provider.Conversation;
import io.turnstream.gateway.provider.ErrorCodes;
import io.turnstream.gateway.provider.FinishReasons;
import io.turnstream.gateway.provider.ModelCaller;
import io.turnstream.gateway.provider.ResolvedProvider;
import io.turnstream.gateway.provider.StepItems;
import io.turnstream.gateway.provider.StepOutcome;
import io.turnstream.gateway.provider.ToolCallRequest;
import io.turnstream.gateway.provider.ToolDefinition;
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.model.ControlMessage;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.ItemType;
import io.turnstream.model.Json;
import io.turnstream.model.Origins;
import io.turnstream.model.OutputItem;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.StreamPayload.Usage;
import io.turnstream.model.ToolResult;
import io.turnstream.model.ToolState;
import io.turnstream.runtime.TraceContext;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Runs one turn: {@code response_start}, the user's prompt as a held user message, then model steps.
 * A step that ends with tool calls waits for their results from {@code llm.tool-results}, publishes
 * each as a {@code function_call_output} item, and calls the model again with them. The turn ends
 * at a final answer, at the step limit, on cancel ({@code aborted}) or on error. This class is the
 * only writer of the turn's raw events.
 */
public final class AgentLoop implements Runnable {

    private static final Logger LOG = LoggerFactory.getLogger(AgentLoop.class);
    private static final Duration DELIVERY_TIMEOUT = Duration.ofSeconds(60);

    /**
     * Everything a turn needs to know, resolved and validated.
     *
     * @param prompt null when the conversation ends with a client-side tool's result
     * @param clientTools names of the offered tools the caller runs itself: the turn ends at a call of one
     */
    public record Turn(String turnId, String threadId, String runId, ResolvedProvider provider, String fallbackModel,
                String system, List<Conversation.Entry> conversation, String prompt,
                List<ToolDefinition> tools, int maxSteps, TraceContext trace,
                String tenantId, Set<String> clientTools) {
        public Turn {
            clientTools = Set.copyOf(clientTools);
        }
    }

    /** The turn ended early; the terminal event is already published. */
    private static final class TurnEnded extends Exception {
        final ResponseStatus status;

        TurnEnded(ResponseStatus status) {
            super(status.wire(), null, false, false);
            this.status = status;
        }

        /** The turn goes on in another gateway; {@code run()} sees the handover and reports no status. */
        static TurnEnded handedOver() {
            return new TurnEnded(ResponseStatus.ABORTED);
        }
    }

    private final Turn turn;
    private final TurnRegistry.ActiveTurn active;
    private final TurnRegistry registry;
    private final TurnPublisher producer;
    private final TurnProgress progress;
    private final ModelCaller client;
    private final LoopWaits waits;
    private final GatewayMetrics metrics;
    private final LoopConfig config;
    private final ThreadAllowances allowances;
    private final AtomicReference<Throwable> publishFailure = new AtomicReference<>();
    private final TurnStatusReporter reporter = new TurnStatusReporter(this::publish);
    private CompletableFuture<Void> lastPublished = CompletableFuture.completedFuture(null);
    private final StepRetry retry;
    private final MaxTokensContinuation continuation;
    private final UsageLedger usage;
    private final ContextManager context;
    private final TurnTracing.TurnSpans spans;
    /** The finish reason the turn completed with, for its span. */
    private String finishReason;
    /** A call of the step being awaited was denied. */
    private boolean denied;
    /** A model step's latest {@code item_done}, not published yet (see {@link #publishStepEvent}). */
    private StreamPayload heldBack;
    /** Calls whose {@code item_done} went out while their step streamed (read-only tools): released already. */
    private final Set<String> releasedEarly = new HashSet<>();
    /** When the running model step started (System.nanoTime), until its first output is published; 0 otherwise. */
    private long stepStarted;

    /**
     * @param progress where the turn starts: at the beginning, or where another gateway left it
     * @param waits how the turn waits: blocking its thread in the gateway, moving a clock in the simulation
     * @param allowances the tools allowed for the rest of their thread: their asks are approved by the loop
     */
    public AgentLoop(Turn turn, TurnProgress progress, TurnRegistry.ActiveTurn active, TurnRegistry registry,
              TurnPublisher producer, ModelCaller client, LoopWaits waits, GatewayMetrics metrics, LoopConfig config,
              ThreadAllowances allowances) {
        this.allowances = allowances;
        this.waits = waits;
        this.turn = turn;
        this.progress = progress;
        this.active = active;
        this.registry = registry;
        this.producer = producer;
        this.client = client;
        this.metrics = metrics;
        this.config = config;
        this.usage = new UsageLedger(config.prices(), progress.usage(), progress.failedUsage());
        this.continuation = new MaxTokensContinuation(progress.continuations());
        this.spans = metrics.tracing().turn(turn, progress.model());
        this.retry = new StepRetry(turn, progress, config, client, metrics, reporter, this::publishStepEvent, active.cancel,
                usage::addFailed, producer.clock(), waits, spans);
        this.context = new ContextManager(turn, config, new ConversationCompactor(client, config), reporter,
                this::publishTogether, active.cancel, usage::add, metrics, producer.clock());
    }

    @Override
    public void run() {
        MDC.put("turnId", turn.turnId());
        MDC.put("traceId", turn.trace().traceId());
        long started = System.nanoTime();
        ResponseStatus status = ResponseStatus.ERROR;
        try {
            status = steps();
        } catch (TurnEnded ended) {
            status = ended.status;
        } catch (RuntimeException e) {
            LOG.error("turn failed inside the gateway", e);
            publish(new StreamPayload.ResponseError(turn.runId(), ErrorInfo.of(ErrorCodes.INTERNAL,
                    "the gateway failed while running the turn: " + e.getClass().getSimpleName())));
        } finally {
            awaitDelivery();
            boolean handedOver = active.handover.isDone();
            spans.ended(status, usage.total(), finishReason, handedOver);
            if (handedOver) {
                registry.release(turn.turnId());
            } else {
                count(status);
                metrics.turn(turn.provider().name(), tenant(), status, Duration.ofNanos(System.nanoTime() - started));
                registry.finish(turn.turnId(), TurnPhase.endedAs(status));
            }
            LOG.info("turn finished: status {} after {} ms, usage {}", handedOver ? "handed over" : status,
                    (System.nanoTime() - started) / 1_000_000, usage.total());
            MDC.remove("turnId");
            MDC.remove("traceId");
        }
    }

    private ResponseStatus steps() throws TurnEnded {
        if (progress.started()) {
            LOG.info("turn resumed at step {}: run {}, thread {}, provider {}, model {}", progress.nextStep(),
                    turn.runId(), turn.threadId(), turn.provider().name(), retry.model());
        } else {
            LOG.info("turn started: run {}, thread {}, provider {}, model {}, up to {} steps", turn.runId(),
                    turn.threadId(), turn.provider().name(), retry.model(), turn.maxSteps());
            publish(new StreamPayload.ResponseStart(turn.runId(), turn.turnId(), turn.threadId(), null, retry.model(),
                    turn.provider().name(), producer.clock().millis(), turn.tenantId()));
        }
        publishUserPrompt();
        Conversation conversation = new Conversation(turn.conversation());
        progress.completed().forEach(conversation::add);
        if (active.handover.isDone()) {
            throw TurnEnded.handedOver();
        }
        if (active.cancel.isCancelled()) {
            throw cancelledBeforeRunning(progress.awaiting());
        }
        if (progress.finishReason() != null) {
            return done(progress.finishReason());
        }
        TurnProgress.Awaiting awaiting = progress.awaiting();
        if (awaiting != null) {
            // a denial the previous owner published ends the turn as one that arrives here does
            denied = !awaiting.denied().isEmpty();
            release(executorCalls(awaiting.unreleased()));
            List<ToolCallRequest> executorCalls = executorCalls(awaiting.calls());
            if (!executorCalls.isEmpty()) {
                conversation.add(awaitToolResults(awaiting.step(), executorCalls, awaiting.published()));
            }
            if (executorCalls.size() < awaiting.calls().size()) {
                return done(FinishReasons.TOOL_CALLS);
            }
            if (stopsAfterDenial()) {
                return done(FinishReasons.TOOL_DENIED);
            }
        }
        for (int step = progress.nextStep(); step <= turn.maxSteps() + continuation.count(); step++) {
            if (active.handover.isDone()) {
                throw TurnEnded.handedOver();
            }
            if (active.cancel.isCancelled()) {
                // cancelled before this step (a takeover found the cancel on llm.control): the model is not called,
                // and what an earlier owner's attempt at the step left open is closed
                retry.stepFailed(step, StepOutcome.abortedBeforeStream());
                throw aborted();
            }
            int current = step;
            stepStarted = System.nanoTime();
            StepOutcome outcome;
            try (Scope inStep = spans.step(step)) {
                outcome = context.call(step, conversation, retry::model, entries -> retry.call(current, entries));
            }
            spans.stepCalled(outcome);
            metrics.step(turn.provider().name(), retry.model(), outcome.status(),
                    Duration.ofNanos(System.nanoTime() - stepStarted));
            stepStarted = 0;
            boolean failed = outcome.status() == ResponseStatus.ERROR;
            Usage used = failed ? usage.addFailed(retry.model(), outcome.usage()) : usage.add(retry.model(), outcome.usage());
            if (used != null) {
                metrics.usage(turn.provider().name(), retry.model(), tenant(), used);
            }
            Usage stepUsage = failed ? null : used;
            ensurePublishing();
            switch (outcome.status()) {
                case ABORTED -> {
                    retry.stepFailed(step, outcome);
                    abandon(outcome.toolCalls(), abortedCall());
                    throw aborted();
                }
                case ERROR -> {
                    retry.stepFailed(step, outcome);
                    abandon(outcome.toolCalls(), new UnansweredCall(ToolState.ABORTED, outcome.error(),
                            "aborted: the model call failed"));
                    publish(new StreamPayload.ResponseError(turn.runId(), outcome.error()));
                    return ResponseStatus.ERROR;
                }
                default -> {
                    // complete: go on
                }
            }
            LOG.info("step {} complete: finish reason {}, {} tool call(s)", step, outcome.finishReason(),
                    outcome.toolCalls().size());
            conversation.add(new Conversation.AssistantNative(outcome.assistantContent()));
            boolean continued = outcome.toolCalls().isEmpty() && continuation.shouldContinue(outcome.finishReason());
            StepItems.Carried carried = continued ? carryLastMessage() : null;
            // the step's held-back last event and its checkpoint commit together: a reader that sees the step
            // complete sees its checkpoint, so a gateway that takes the turn over never calls it again
            producer.atomically(() -> {
                flushHeldBack();
                if (stepUsage != null) {
                    reporter.stepCompleted(current, retry.model(), stepUsage);
                }
                producer.stepDone(current, TurnProgress.checkpoint(retry.model(), usage.total(), usage.failed(),
                        outcome, continued, carried));
            });
            List<ToolCallRequest> executorCalls = executorCalls(outcome.toolCalls());
            release(executorCalls);
            if (continued) {
                LOG.info("step {} stopped at the output token limit; asking the model to continue", step);
                retry.carry(carried);
                reporter.continuing();
                conversation.add(new Conversation.UserText(MaxTokensContinuation.PROMPT));
                continue;
            }
            if (outcome.toolCalls().isEmpty()) {
                return done(outcome.finishReason());
            }
            if (!executorCalls.isEmpty()) {
                conversation.add(awaitToolResults(step, executorCalls, Map.of()));
            }
            if (executorCalls.size() < outcome.toolCalls().size()) {
                LOG.info("step {} called a client-side tool: the turn returns the call to the caller", step);
                return done(FinishReasons.TOOL_CALLS);
            }
            if (stopsAfterDenial()) {
                return done(FinishReasons.TOOL_DENIED);
            }
        }
        LOG.info("turn reached its limit of {} steps", turn.maxSteps());
        return done(FinishReasons.MAX_STEPS);
    }

    private ResponseStatus done(String finishReason) {
        this.finishReason = finishReason;
        publish(new StreamPayload.ResponseDone(turn.runId(), ResponseStatus.COMPLETE, usage.total(), finishReason,
                retry.model(), usage.failed()));
        return ResponseStatus.COMPLETE;
    }

    /**
     * A turn cancelled before it ran here (a takeover found the cancel on {@code llm.control}): nothing more runs. A
     * call not released yet never reaches the executor; the released ones get their outputs (the cancel answers
     * those still out); what an earlier owner's attempt at the next step left open is closed.
     */
    private TurnEnded cancelledBeforeRunning(TurnProgress.Awaiting awaiting) throws TurnEnded {
        if (awaiting != null) {
            List<ToolCallRequest> unreleased = executorCalls(awaiting.unreleased());
            abandon(unreleased, abortedCall());
            List<ToolCallRequest> released = executorCalls(awaiting.calls()).stream()
                    .filter(call -> !unreleased.contains(call)).toList();
            if (!released.isEmpty()) {
                awaitToolResults(awaiting.step(), released, awaiting.published());
            }
        }
        retry.stepFailed(progress.nextStep(), StepOutcome.abortedBeforeStream());
        return aborted();
    }

    private TurnEnded aborted() {
        LOG.info("turn cancelled: {}", active.cancel.reason());
        publish(new StreamPayload.ResponseDone(turn.runId(), ResponseStatus.ABORTED, usage.total(), null, retry.model(),
                usage.failed()));
        return new TurnEnded(ResponseStatus.ABORTED);
    }

    private void publishUserPrompt() {
        String id = turn.runId() + "-user-prompt";
        if (progress.promptDone() || turn.prompt() == null) {
            return;
        }
        if (!progress.promptStarted()) {
            publish(new StreamPayload.ItemStart(id, ItemType.MESSAGE, turn.prompt(), null, null, null,
                    Origins.USER));
        }
        publish(new StreamPayload.ItemDone(id, new OutputItem(id, ItemType.MESSAGE, turn.prompt(), Origins.USER,
                null, null, null, null, null, null)));
    }

    /**
     * The calls the tool executor runs: all but those of client-side tools, which get no {@code item_done}
     * (so never reach {@code llm.tool-calls}; the topology completes them, with their streamed arguments,
     * when the turn closes) and are answered by the caller's next request.
     */
    private List<ToolCallRequest> executorCalls(List<ToolCallRequest> calls) {
        return calls.stream().filter(call -> !turn.clientTools().contains(call.name())).toList();
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
     * Waits for every call's result, publishing each as a {@code function_call_output} item as it
     * arrives, and each call's lifecycle after {@code pending} (published as it streamed): awaiting
     * approval, running when the executor says it started (or, if the result comes first, just before
     * it), completed or error; returns them in call order for the next request. A call that will get
     * no result (cancel, timeout) still gets its output, saying why. What to do when is the
     * {@link ToolRound}'s; this method feeds it what arrives from Kafka and the clock.
     *
     * @param published outputs a previous gateway of the turn already published, by call id
     */
    private Conversation.ToolOutputs awaitToolResults(int step, List<ToolCallRequest> calls,
                                                      Map<String, Conversation.ToolOutput> published) throws TurnEnded {
        Clock clock = producer.clock();
        ToolRound round = new ToolRound(turn.runId(), step, calls, published.keySet(), clock.millis(),
                config.toolResultTimeout());
        BlockingQueue<ToolRound.Input> inputs = new LinkedBlockingQueue<>();
        calls.stream().filter(call -> !published.containsKey(call.callId())).forEach(spans::toolCallReleased);
        calls.stream().filter(call -> !published.containsKey(call.callId())).map(ToolCallRequest::callId).forEach(id -> {
            active.result(id).thenAccept(result -> inputs.add(new ToolRound.Input.Result(result)));
            active.started(id).thenAccept(at -> inputs.add(new ToolRound.Input.Started(id, at)));
            active.awaitingApproval(id).thenAccept(asked -> inputs.add(new ToolRound.Input.ApprovalAsked(id)));
        });
        active.cancel.future().thenAccept(reason -> inputs.add(new ToolRound.Input.Cancel(reason)));
        active.handover.thenAccept(handedOver -> inputs.add(new ToolRound.Input.Handover()));
        Map<String, Conversation.ToolOutput> outputs = new LinkedHashMap<>(published);
        long awaitStarted = System.nanoTime();
        List<ToolRound.Output> todo = round.start();
        while (true) {
            for (ToolRound.Output output : todo) {
                if (output instanceof ToolRound.Output.Ended ended) {
                    switch (ended.how()) {
                        case ANSWERED -> {
                            List<Conversation.ToolOutput> ordered = new ArrayList<>();
                            calls.forEach(call -> ordered.add(outputs.get(call.callId())));
                            return new Conversation.ToolOutputs(ordered);
                        }
                        case TIMED_OUT -> {
                            publish(new StreamPayload.ResponseError(turn.runId(), ended.error()));
                            throw new TurnEnded(ResponseStatus.ERROR);
                        }
                        case CANCELLED -> throw aborted();
                        case HANDED_OVER -> throw TurnEnded.handedOver();
                    }
                }
                apply(output, outputs, awaitStarted);
            }
            ToolRound.Input next;
            try {
                next = waits.next(inputs, round.deadline());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                next = new ToolRound.Input.Cancel(active.cancel.reason());
            }
            todo = round.on(next != null ? next : new ToolRound.Input.Tick(clock.millis()));
        }
    }

    /** Shows a call's status, or publishes its output. */
    private void apply(ToolRound.Output output, Map<String, Conversation.ToolOutput> outputs, long awaitStarted) {
        if (output instanceof ToolRound.Output.AwaitingApproval asked) {
            reporter.toolAwaitingApproval(asked.call());
            approveIfAllowed(asked.call());
        } else if (output instanceof ToolRound.Output.Running running) {
            reporter.toolRunning(running.call(), running.at() != null ? running.at() : producer.clock().millis());
        } else if (output instanceof ToolRound.Output.Answered answered) {
            ToolResult result = answered.result();
            metrics.toolCall(answered.call().name(), result.success(), Duration.ofNanos(System.nanoTime() - awaitStarted));
            if (result.error() != null && ErrorCodes.TOOL_CALL_DENIED.equals(result.error().code())) {
                denied = true;
            }
            spans.toolCallEnded(answered.call().callId(), result, null);
            // together: the status says why the call failed (a denial), which a gateway taking the turn over reads
            producer.atomically(() -> {
                outputs.put(answered.call().callId(), publishOutput(answered.outputId(), answered.call(), answered.result()));
                reporter.toolFinished(answered.call(), answered.result());
            });
        } else if (output instanceof ToolRound.Output.Unanswered unanswered) {
            endWithoutResult(unanswered.outputId(), unanswered.call(), unanswered.startedAt(), unanswered.why());
        }
    }

    /**
     * A person allowed the call's tool for the rest of the thread ({@code remember: true} on an earlier
     * approval): the loop approves the executor's ask itself, on {@code llm.control} with the turn's writes.
     */
    private void approveIfAllowed(ToolCallRequest call) {
        if (allowances.allows(turn.tenantId(), turn.threadId(), call.name())) {
            LOG.info("call {} of {}: the tool is allowed for the rest of the thread; approving it", call.callId(),
                    call.name());
            producer.control(ControlMessage.approval(turn.turnId(), call.callId(), true, ThreadAllowances.REASON));
        }
    }

    /**
     * A denied call ends the turn once the step's results are in, unless the gateway is set to go on
     * ({@code turnstream.gateway.approvals.on-deny=continue}): the model is not called again.
     */
    private boolean stopsAfterDenial() {
        if (denied && config.onDeny() == LoopConfig.OnDeny.STOP) {
            LOG.info("a tool call was denied; the turn stops without calling the model again");
            return true;
        }
        denied = false;
        return false;
    }

    private UnansweredCall abortedCall() {
        return UnansweredCall.aborted(active.cancel.reason());
    }

    /** Calls of a step that failed, was cancelled or was made again: never waited for, each ends with an output. */
    private void abandon(List<ToolCallRequest> calls, UnansweredCall why) {
        calls.forEach(call -> {
            if (!releasedEarly.contains(call.itemId())) {
                // the call streamed whole but its item_done was held for the commit: it ends here, never released
                publish(why.error() != null ? new StreamPayload.ItemError(call.itemId(), why.error())
                        : new StreamPayload.ItemCancelled(call.itemId()));
            }
            endWithoutResult(call.itemId() + TurnProgress.ABANDONED_OUTPUT, call, null, why);
        });
    }

    private void endWithoutResult(String outputId, ToolCallRequest call, Long startedAt, UnansweredCall why) {
        long now = producer.clock().millis();
        spans.toolCallEnded(call.callId(), null, why.error() != null ? why.error().code() : why.status().wire());
        publishOutput(outputId, call, new ToolResult(call.callId(), turn.turnId(), call.name(), false,
                TextNode.valueOf(why.output()), why.error(), startedAt == null ? 0 : startedAt, now));
        reporter.toolEnded(call, why.status(), startedAt, now, why.error());
    }

    private String outputId(int step, int index) {
        return turn.runId() + "-s" + step + "-out" + index;
    }

    private Conversation.ToolOutput publishOutput(String id, ToolCallRequest call, ToolResult result) {
        String name = result.toolName() != null ? result.toolName() : call.name();
        JsonNode output = result.output();
        String errorText = result.error() == null ? null : result.error().code() + ": " + result.error().message();
        if (!result.success() && (output == null || output.isNull()) && errorText != null) {
            output = TextNode.valueOf(errorText);
        }
        // together: a gateway that takes the turn over publishes the output again unless its item_done is there
        publishTogether(List.of(
                new StreamPayload.ItemStart(id, ItemType.FUNCTION_CALL_OUTPUT, null, name, null, call.callId(), null),
                new StreamPayload.ItemDone(id, new OutputItem(id, ItemType.FUNCTION_CALL_OUTPUT, null, null, name, null,
                        call.callId(), output, result.success(), null))));
        String text = Json.asText(output);
        return new Conversation.ToolOutput(call.callId(), name, text == null ? "" : text, result.success());
    }

    /**
     * Publishes a model step's payload, holding back each {@code item_done} until the next payload: the
     * step's last one goes out with its checkpoint ({@link TurnPublisher#atomically}). An item is done
     * to a reader only when the step may be; its text is all there meanwhile.
     */
    private void publishStepEvent(StreamPayload payload) {
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

    private void flushHeldBack() {
        if (heldBack != null) {
            StreamPayload held = heldBack;
            heldBack = null;
            publish(held);
        }
    }

    private void publishTogether(List<StreamPayload> payloads) {
        producer.atomically(() -> payloads.forEach(this::publish));
    }

    private void publish(StreamPayload payload) {
        flushHeldBack();
        if (stepStarted != 0 && (payload instanceof StreamPayload.ItemStart || payload instanceof StreamPayload.ItemDelta)) {
            metrics.timeToFirstToken(turn.provider().name(), retry.model(), Duration.ofNanos(System.nanoTime() - stepStarted));
            stepStarted = 0;
        }
        CompletableFuture<Void> sent = producer.rawEvent(turn.runId(), turn.trace(), payload);
        sent.whenComplete((ok, error) -> {
            if (error != null && publishFailure.compareAndSet(null, error)) {
                metrics.increment(Counter.PUBLISH_FAILURES);
                LOG.error("cannot publish the turn's events: {}", error.getMessage());
            }
        });
        metrics.increment(Counter.EVENTS_PUBLISHED);
        lastPublished = sent;
    }

    /** A turn whose events cannot reach Kafka is stopped: continuing would spend tokens nobody sees. */
    private void ensurePublishing() throws TurnEnded {
        if (publishFailure.get() != null) {
            active.cancel.cancel("events cannot be published");
            throw new TurnEnded(ResponseStatus.ERROR);
        }
    }

    /** The turn is reported finished only once its last event is on the broker. */
    private void awaitDelivery() {
        try {
            lastPublished.get(DELIVERY_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            LOG.error("the turn's last events may not have reached Kafka: {}", e.getMessage());
        }
    }


    /** The turn's tenant as a metric label: {@code none} on a gateway without API keys. */
    private String tenant() {
        return turn.tenantId() == null ? "none" : turn.tenantId();
    }

    private void count(ResponseStatus status) {
        if (status == ResponseStatus.COMPLETE) {
            metrics.increment(Counter.TURNS_COMPLETED);
        } else if (status == ResponseStatus.ABORTED) {
            metrics.increment(Counter.TURNS_ABORTED);
        } else {
            metrics.increment(Counter.TURNS_FAILED);
        }
    }
}
