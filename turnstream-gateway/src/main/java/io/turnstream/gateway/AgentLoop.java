package io.turnstream.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.gateway.GatewayMetrics.Counter;
import io.turnstream.gateway.provider.Conversation;
import io.turnstream.gateway.provider.ErrorCodes;
import io.turnstream.gateway.provider.FinishReasons;
import io.turnstream.gateway.provider.ModelRequest;
import io.turnstream.gateway.provider.ProviderClient;
import io.turnstream.gateway.provider.StepItems;
import io.turnstream.gateway.provider.StepOutcome;
import io.turnstream.gateway.provider.ToolCallRequest;
import io.turnstream.gateway.provider.ToolDefinition;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.ItemTypes;
import io.turnstream.model.Json;
import io.turnstream.model.OutputItem;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.StreamPayload.ToolStatus;
import io.turnstream.model.StreamPayload.Usage;
import io.turnstream.model.ToolResult;
import io.turnstream.runtime.TraceContext;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
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
final class AgentLoop implements Runnable {

    private static final Logger LOG = LoggerFactory.getLogger(AgentLoop.class);
    private static final Duration DELIVERY_TIMEOUT = Duration.ofSeconds(60);

    /** Everything a turn needs to know, resolved and validated. */
    record Turn(String turnId, String threadId, String runId, Providers.Resolved provider, String fallbackModel,
                String system, List<Conversation.Entry> conversation, String prompt,
                List<ToolDefinition> tools, int maxSteps, TraceContext trace,
                String tenantId) {
    }

    /** Status of a turn that goes on in another gateway. */
    private static final String HANDED_OVER = "handed over";

    /** The turn ended early; the terminal event is already published. */
    private static final class TurnEnded extends Exception {
        final String status;

        TurnEnded(String status) {
            super(status, null, false, false);
            this.status = status;
        }
    }

    private final Turn turn;
    private final TurnRegistry.ActiveTurn active;
    private final TurnRegistry registry;
    private final TurnPublisher producer;
    private final TurnProgress progress;
    private final ProviderClient client;
    private final GatewayMetrics metrics;
    private final GatewayConfig config;
    private final AtomicReference<Throwable> publishFailure = new AtomicReference<>();
    private final TurnStatusReporter status = new TurnStatusReporter(this::publish);
    private CompletableFuture<Void> lastPublished = CompletableFuture.completedFuture(null);
    private String model;
    private long promptTokens;
    private long completionTokens;
    private boolean usageReported;

    /** @param progress where the turn starts: at the beginning, or where another gateway left it */
    AgentLoop(Turn turn, TurnProgress progress, TurnRegistry.ActiveTurn active, TurnRegistry registry,
              TurnPublisher producer, ProviderClient client, GatewayMetrics metrics, GatewayConfig config) {
        this.turn = turn;
        this.progress = progress;
        this.active = active;
        this.registry = registry;
        this.producer = producer;
        this.client = client;
        this.metrics = metrics;
        this.config = config;
        this.model = progress.model();
        addUsage(progress.usage());
    }

    @Override
    public void run() {
        MDC.put("turnId", turn.turnId());
        MDC.put("traceId", turn.trace().traceId());
        long started = System.nanoTime();
        String status = StepOutcome.Status.ERROR.wire();
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
            if (active.handover.isDone()) {
                status = HANDED_OVER;
                registry.release(turn.turnId());
            } else {
                count(status);
                registry.finish(turn.turnId(), status);
            }
            LOG.info("turn finished: status {} after {} ms, usage {}/{} tokens", status,
                    (System.nanoTime() - started) / 1_000_000, promptTokens, completionTokens);
            MDC.remove("turnId");
            MDC.remove("traceId");
        }
    }

    private String steps() throws TurnEnded {
        if (progress.started()) {
            LOG.info("turn resumed at step {}: run {}, thread {}, provider {}, model {}", progress.nextStep(),
                    turn.runId(), turn.threadId(), turn.provider().name(), model);
        } else {
            LOG.info("turn started: run {}, thread {}, provider {}, model {}, up to {} steps", turn.runId(),
                    turn.threadId(), turn.provider().name(), model, turn.maxSteps());
            publish(new StreamPayload.ResponseStart(turn.runId(), turn.turnId(), turn.threadId(), null, model,
                    turn.provider().name(), System.currentTimeMillis(), turn.tenantId()));
        }
        publishUserPrompt();
        Conversation conversation = new Conversation(turn.conversation());
        progress.completed().forEach(conversation::add);
        if (progress.finishReason() != null) {
            return done(progress.finishReason());
        }
        TurnProgress.Awaiting awaiting = progress.awaiting();
        if (awaiting != null) {
            conversation.add(awaitToolResults(awaiting.step(), awaiting.calls(), awaiting.published()));
        }
        for (int step = progress.nextStep(); step <= turn.maxSteps(); step++) {
            if (active.handover.isDone()) {
                throw new TurnEnded(HANDED_OVER);
            }
            StepOutcome outcome = callModel(step, conversation);
            addUsage(outcome.usage());
            ensurePublishing();
            switch (outcome.status()) {
                case ABORTED -> {
                    endUnanswered(step, outcome.toolCalls(), outcome.toolCalls(), Map.of(), abortedCall());
                    throw aborted();
                }
                case ERROR -> {
                    endUnanswered(step, outcome.toolCalls(), outcome.toolCalls(), Map.of(),
                            new UnansweredCall(ToolStatus.ABORTED, outcome.error(), "aborted: the model call failed"));
                    publish(new StreamPayload.ResponseError(turn.runId(), outcome.error()));
                    return StepOutcome.Status.ERROR.wire();
                }
                default -> {
                    // complete: go on
                }
            }
            LOG.info("step {} complete: finish reason {}, {} tool call(s)", step, outcome.finishReason(),
                    outcome.toolCalls().size());
            conversation.add(new Conversation.AssistantNative(outcome.assistantContent()));
            producer.stepDone(step, TurnProgress.checkpoint(model, usage(), outcome));
            if (outcome.toolCalls().isEmpty()) {
                return done(outcome.finishReason());
            }
            conversation.add(awaitToolResults(step, outcome.toolCalls(), Map.of()));
        }
        LOG.info("turn reached its limit of {} steps", turn.maxSteps());
        return done(FinishReasons.MAX_STEPS);
    }

    private String done(String finishReason) {
        publish(new StreamPayload.ResponseDone(turn.runId(), StepOutcome.Status.COMPLETE.wire(), usage(), finishReason,
                model));
        return StepOutcome.Status.COMPLETE.wire();
    }

    private TurnEnded aborted() {
        LOG.info("turn cancelled: {}", active.cancel.reason());
        publish(new StreamPayload.ResponseDone(turn.runId(), StepOutcome.Status.ABORTED.wire(), usage(), null, model));
        return new TurnEnded(StepOutcome.Status.ABORTED.wire());
    }

    private void publishUserPrompt() {
        String id = turn.runId() + "-user-prompt";
        if (progress.promptDone()) {
            return;
        }
        if (!progress.promptStarted()) {
            publish(new StreamPayload.ItemStart(id, ItemTypes.MESSAGE, turn.prompt(), null, null, null,
                    ItemTypes.ORIGIN_USER));
        }
        publish(new StreamPayload.ItemDone(id, new OutputItem(id, ItemTypes.MESSAGE, turn.prompt(), ItemTypes.ORIGIN_USER,
                null, null, null, null, null, null)));
    }

    /**
     * One model call, retried on transient failures only while nothing of the step has been
     * published; on overload, switched once to the fallback model when there is one.
     */
    private StepOutcome callModel(int step, Conversation conversation) {
        StepItems items = new StepItems(turn.runId() + "-s" + step, turn.provider().name(), this::publish);
        TurnProgress.Interrupted interrupted = progress.interrupted();
        if (interrupted != null && interrupted.step() == step) {
            LOG.info("step {} was streaming when the turn's previous gateway stopped; calling the model again", step);
            items = StepItems.resumed(turn.runId() + "-s" + step, turn.provider().name(), this::publish,
                    interrupted.nextItem(), interrupted.open());
            items.withdraw();
        }
        for (int attempt = 1; ; attempt++) {
            ModelRequest request = new ModelRequest(model, turn.system(), conversation.entries(), turn.tools(),
                    config.maxTokens(), config.thinkingBudget());
            metrics.increment(Counter.MODEL_CALLS);
            status.callStarting(attempt);
            StepOutcome outcome = client.call(turn.provider().adapter(), turn.provider().endpoint(), request, items,
                    active.cancel);
            if (outcome.status() != StepOutcome.Status.ERROR) {
                return outcome;
            }
            metrics.increment(Counter.PROVIDER_ERRORS);
            if (ErrorCodes.STREAM_STALLED.equals(outcome.error().code())) {
                metrics.increment(Counter.STALLS);
                status.stalled(outcome.error());
            }
            LOG.warn("step {} attempt {} with model {} failed: {}: {}", step, attempt, model, outcome.error().code(),
                    outcome.error().message());
            if (!outcome.canRetry() || active.cancel.isCancelled()) {
                return outcome;
            }
            String fallback = turn.fallbackModel();
            if (outcome.overloaded() && fallback != null && !fallback.equals(model)) {
                LOG.warn("model {} is overloaded; falling back to {} for the rest of the turn", model, fallback);
                metrics.increment(Counter.FALLBACKS);
                status.fallback(model, fallback, outcome.error());
                model = fallback;
                continue;
            }
            if (attempt >= config.retry().maxAttempts()) {
                LOG.warn("giving up on step {} after {} attempts", step, attempt);
                return outcome;
            }
            Duration delay = config.retry().delay(attempt, outcome.retryAfter());
            if (delay == null) {
                LOG.warn("the provider asks to retry after {} s, longer than the {} s we wait; giving up",
                        outcome.retryAfter().toSeconds(), config.retry().maxDelay().toSeconds());
                return outcome;
            }
            metrics.increment(Counter.RETRIES);
            status.retrying(attempt + 1, delay, outcome.error());
            LOG.warn("retrying step {} in {} ms (retry {} of {})", step, delay.toMillis(), attempt,
                    config.retry().maxAttempts() - 1);
            if (active.cancel.sleep(delay)) {
                return StepOutcome.abortedBeforeStream();
            }
        }
    }

    /**
     * Waits for every call's result, publishing each as a {@code function_call_output} item as it
     * arrives, and each call's lifecycle (pending, running when the executor says it started,
     * completed or error); returns them in call order for the next request. A call that will get no
     * result (cancel, timeout) still gets its output, saying why.
     *
     * @param published outputs a previous gateway of the turn already published, by call id
     */
    private Conversation.ToolOutputs awaitToolResults(int step, List<ToolCallRequest> calls,
                                                      Map<String, Conversation.ToolOutput> published) throws TurnEnded {
        Map<ToolCallRequest, CompletableFuture<ToolResult>> pending = new LinkedHashMap<>();
        calls.stream().filter(call -> !published.containsKey(call.callId()))
                .forEach(call -> pending.put(call, active.result(call.callId())));
        pending.keySet().forEach(status::toolPending);
        Map<String, Long> startedAt = new HashMap<>();
        Map<String, Conversation.ToolOutput> outputs = new LinkedHashMap<>(published);
        long deadline = System.nanoTime() + config.toolResultTimeout().toNanos();
        while (!pending.isEmpty()) {
            List<CompletableFuture<?>> waitingFor = new ArrayList<>(pending.values());
            pending.keySet().stream().filter(call -> !startedAt.containsKey(call.callId()))
                    .forEach(call -> waitingFor.add(active.started(call.callId())));
            waitingFor.add(active.cancel.future());
            waitingFor.add(active.handover);
            try {
                CompletableFuture.anyOf(waitingFor.toArray(CompletableFuture[]::new))
                        .get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                ToolCallRequest late = pending.keySet().iterator().next();
                ErrorInfo timeout = ErrorInfo.of(ErrorCodes.TOOL_RESULT_TIMEOUT, "no result for tool call "
                        + late.callId() + " (" + late.name() + ") within " + config.toolResultTimeout().toSeconds()
                        + " s; is the tool executor running?");
                endUnanswered(step, calls, pending.keySet(), startedAt, new UnansweredCall(ToolStatus.ERROR, timeout,
                        "timed out: no result within " + config.toolResultTimeout().toSeconds() + " s"));
                publish(new StreamPayload.ResponseError(turn.runId(), timeout));
                throw new TurnEnded(StepOutcome.Status.ERROR.wire());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                endUnanswered(step, calls, pending.keySet(), startedAt, abortedCall());
                throw aborted();
            } catch (ExecutionException impossible) {
                throw new IllegalStateException(impossible);
            }
            if (active.cancel.isCancelled()) {
                endUnanswered(step, calls, pending.keySet(), startedAt, abortedCall());
                throw aborted();
            }
            if (active.handover.isDone()) {
                throw new TurnEnded(HANDED_OVER);
            }
            for (var it = pending.entrySet().iterator(); it.hasNext(); ) {
                var entry = it.next();
                ToolCallRequest call = entry.getKey();
                if (entry.getValue().isDone()) {
                    it.remove();
                    ToolResult result = entry.getValue().join();
                    outputs.put(call.callId(), publishOutput(step, calls.indexOf(call), call, result));
                    status.toolFinished(call, result);
                } else if (!startedAt.containsKey(call.callId()) && active.started(call.callId()).isDone()) {
                    long at = active.started(call.callId()).join();
                    startedAt.put(call.callId(), at);
                    status.toolRunning(call, at);
                }
            }
        }
        List<Conversation.ToolOutput> ordered = new ArrayList<>();
        calls.forEach(call -> ordered.add(outputs.get(call.callId())));
        return new Conversation.ToolOutputs(ordered);
    }

    /** Why a tool call gets no result from the executor, as its lifecycle status, error and output text. */
    private record UnansweredCall(String status, ErrorInfo error, String output) {
    }

    private UnansweredCall abortedCall() {
        String reason = active.cancel.reason();
        return new UnansweredCall(ToolStatus.ABORTED, ErrorInfo.of(ErrorCodes.TOOL_CALL_ABORTED, reason == null ? "cancelled" : reason),
                "aborted" + (reason == null ? "" : ": " + reason));
    }

    /** Every tool call ends with an output: the calls that will get no result get one saying why, with success false. */
    private void endUnanswered(int step, List<ToolCallRequest> calls, Collection<ToolCallRequest> unanswered,
                               Map<String, Long> startedAt, UnansweredCall why) {
        long now = System.currentTimeMillis();
        for (ToolCallRequest call : List.copyOf(unanswered)) {
            Long started = startedAt.get(call.callId());
            publishOutput(step, calls.indexOf(call), call, new ToolResult(call.callId(), turn.turnId(), call.name(), false,
                    TextNode.valueOf(why.output()), why.error(), started == null ? 0 : started, now));
            status.toolEnded(call, why.status(), started, why.error());
        }
    }

    private Conversation.ToolOutput publishOutput(int step, int index, ToolCallRequest call, ToolResult result) {
        String id = turn.runId() + "-s" + step + "-out" + index;
        String name = result.toolName() != null ? result.toolName() : call.name();
        JsonNode output = result.output();
        String errorText = result.error() == null ? null : result.error().code() + ": " + result.error().message();
        if (!result.success() && (output == null || output.isNull()) && errorText != null) {
            output = TextNode.valueOf(errorText);
        }
        publish(new StreamPayload.ItemStart(id, ItemTypes.FUNCTION_CALL_OUTPUT, null, name, null, call.callId(), null));
        publish(new StreamPayload.ItemDone(id, new OutputItem(id, ItemTypes.FUNCTION_CALL_OUTPUT, null, null, name, null,
                call.callId(), output, result.success(), null)));
        String text = Json.asText(output);
        return new Conversation.ToolOutput(call.callId(), name, text == null ? "" : text, result.success());
    }

    private void publish(StreamPayload payload) {
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
            throw new TurnEnded(StepOutcome.Status.ERROR.wire());
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

    private void addUsage(Usage usage) {
        if (usage != null) {
            usageReported = true;
            promptTokens += usage.promptTokens();
            completionTokens += usage.completionTokens();
        }
    }

    /** The turn's usage: every step's, summed. */
    private Usage usage() {
        return usageReported ? new Usage(promptTokens, completionTokens, promptTokens + completionTokens) : null;
    }

    private void count(String status) {
        if (StepOutcome.Status.COMPLETE.wire().equals(status)) {
            metrics.increment(Counter.TURNS_COMPLETED);
        } else if (StepOutcome.Status.ABORTED.wire().equals(status)) {
            metrics.increment(Counter.TURNS_ABORTED);
        } else {
            metrics.increment(Counter.TURNS_FAILED);
        }
    }
}
