package io.turnstream.gateway.loop;

import io.opentelemetry.api.trace.Span;
import io.turnstream.gateway.loop.GatewayMetrics.Counter;
import io.turnstream.gateway.provider.CancelSignal;
import io.turnstream.gateway.provider.Conversation;
import io.turnstream.gateway.provider.ModelRequest;
import io.turnstream.gateway.provider.ModelCaller;
import io.turnstream.gateway.provider.StepItems;
import io.turnstream.gateway.provider.StepOutcome;
import io.turnstream.gateway.provider.ToolDefinition;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload.Usage;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.random.RandomGenerator;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shell that runs a step's {@link StepAttempts}: makes its model calls over HTTP, waits its
 * backoffs (a cancel cuts them short), publishes its statuses and counts its metrics. One step's model call, recovered where it can be: a transient failure (rate limit, overload,
 * broken or stalled stream) is retried with backoff within the retry budget, also after output has
 * started: every item the failed attempt showed, open or done, is withdrawn ({@code item_withdrawn}:
 * its function calls never run, see {@link StepItems}) and the next attempt streams new items of the
 * same step (ids {@code {runId}-s{step}-{n}} go on). What the failed attempt used is counted apart. An overload or a stall
 * switches to the fallback model for the rest of the turn, at any point of a step. Each retry,
 * fallback and stall is reported as a turn status.
 */
final class StepRetry {

    private static final Logger LOG = LoggerFactory.getLogger(StepRetry.class);

    private final AgentLoop.Turn turn;
    private final LoopConfig config;
    private final ModelCaller client;
    private final GatewayMetrics metrics;
    private final TurnStatusReporter status;
    private final StepItems.Sink sink;
    private final CancelSignal cancel;
    private final BiConsumer<String, Usage> failedUsage;
    private final TurnProgress.Interrupted interrupted;
    private final Clock clock;
    private final LoopWaits waits;
    private final TurnTracing.TurnSpans spans;
    private final RandomGenerator random = RandomGenerator.getDefault();
    /** The latest attempt's items of step {@link #lastStep}: a later call of the same step names its items after them. */
    private StepItems lastItems;
    private int lastStep;
    private String model;
    /** The message a {@code max_tokens} step left open: the next step's first message joins it. */
    private StepItems.Carried carried;
    /** The carried message was written into by the attempt a stopped gateway was streaming. */
    private boolean carriedTouched;
    /** The offered tools declared read-only that the executor runs: their calls start while the model streams. */
    private final Set<String> readOnlyTools;

    /**
     * @param progress where the turn starts: the model it uses now and the step to take back, if any
     * @param failedUsage receives what each withdrawn attempt used, with the model that served it
     */
    StepRetry(AgentLoop.Turn turn, TurnProgress progress, LoopConfig config, ModelCaller client,
              GatewayMetrics metrics, TurnStatusReporter status, StepItems.Sink sink, CancelSignal cancel,
              BiConsumer<String, Usage> failedUsage, Clock clock, LoopWaits waits, TurnTracing.TurnSpans spans) {
        this.clock = clock;
        this.waits = waits;
        this.spans = spans;
        this.turn = turn;
        this.config = config;
        this.client = client;
        this.metrics = metrics;
        this.status = status;
        this.sink = sink;
        this.cancel = cancel;
        this.failedUsage = failedUsage;
        this.interrupted = progress.interrupted();
        this.model = progress.model();
        this.readOnlyTools = turn.tools().stream().filter(ToolDefinition::readOnly).map(ToolDefinition::name)
                .filter(name -> !turn.clientTools().contains(name)).collect(Collectors.toSet());
        this.carried = progress.carried();
        this.carriedTouched = progress.carriedTouched();
    }

    /** The next step continues a step that stopped at the output token limit: its first message joins this one. */
    void carry(StepItems.Carried message) {
        carried = message;
    }

    /**
     * The step ended without completing (failed or cancelled, maybe before its first call): what its last
     * attempt left open is closed, a message carried from a continued step with its text.
     */
    void stepFailed(int step, StepOutcome outcome) {
        StepItems items = lastItems != null && lastStep == step ? lastItems : firstAttemptItems(step);
        if (outcome.status() == ResponseStatus.ABORTED) {
            items.cancelAll();
        } else {
            items.failAll(outcome.error());
        }
    }

    /** The model calls go to now: the turn's model, or the fallback model once it fell back. */
    String model() {
        return model;
    }

    StepOutcome call(int step, List<Conversation.Entry> conversation) {
        StepItems items = firstAttemptItems(step);
        StepAttempts attempts = new StepAttempts(model, turn.fallbackModel(), config.retry(), random);
        Deque<StepAttempts.Output> todo = new ArrayDeque<>(attempts.start());
        while (true) {
            StepAttempts.Output output = todo.remove();
            List<StepAttempts.Output> next = List.of();
            if (output instanceof StepAttempts.Output.Call call) {
                model = call.model();
                items.withdrawOnRetryableFailure(call.withdrawOnFailure());
                metrics.increment(Counter.MODEL_CALLS);
                status.callStarting(call.attempt());
                ModelRequest request = new ModelRequest(model, turn.system(), conversation, turn.tools(),
                        config.maxTokens(), config.thinkingBudget());
                Span span = spans.modelCall(model);
                StepOutcome outcome = client.call(turn.provider().adapter(), turn.provider().endpoint(), request, items,
                        cancel);
                TurnTracing.modelCallEnded(span, outcome);
                next = attempts.on(new StepAttempts.Input.AttemptEnded(outcome, items.withdrawn(), cancel.isCancelled(),
                        clock.millis()));
            } else if (output instanceof StepAttempts.Output.Failed failed) {
                metrics.increment(Counter.PROVIDER_ERRORS);
                LOG.warn("step {} attempt {} with model {} failed: {}: {}", step, failed.attempt(), failed.model(),
                        failed.error().code(), failed.error().message());
            } else if (output instanceof StepAttempts.Output.Stalled stalled) {
                metrics.increment(Counter.STALLS);
                status.stalled(stalled.error());
            } else if (output instanceof StepAttempts.Output.Withdrawn withdrawn) {
                failedUsage.accept(withdrawn.model(), withdrawn.usage());
                items = items.nextAttempt();
                lastItems = items;
            } else if (output instanceof StepAttempts.Output.FellBack fellBack) {
                LOG.warn("model {} failed ({}); falling back to {} for the rest of the turn", fellBack.from(),
                        fellBack.error().code(), fellBack.to());
                metrics.increment(Counter.FALLBACKS);
                status.fallback(fellBack.from(), fellBack.to(), fellBack.error());
            } else if (output instanceof StepAttempts.Output.Retrying retrying) {
                metrics.increment(Counter.RETRIES);
                status.retrying(retrying.nextAttempt(), retrying.delay(), retrying.error());
                LOG.warn("retrying step {} in {} ms (retry {} of {})", step, retrying.delay().toMillis(),
                        retrying.nextAttempt() - 1, config.retry().maxAttempts() - 1);
            } else if (output instanceof StepAttempts.Output.WaitUntil wait) {
                boolean cancelled = waits.sleepUntil(wait.at(), cancel);
                next = attempts.on(cancelled ? new StepAttempts.Input.Cancel() : new StepAttempts.Input.Tick(clock.millis()));
            } else if (output instanceof StepAttempts.Output.Ended ended) {
                if (ended.gaveUp() != null) {
                    LOG.warn("step {}: {}", step, ended.gaveUp());
                }
                return ended.outcome();
            }
            todo.addAll(next);
        }
    }

    /**
     * A new step's items; for the step another gateway was streaming when it stopped, what it had
     * shown is withdrawn first, and the call starts over with the ids after it.
     */
    private StepItems firstAttemptItems(int step) {
        String ids = turn.runId() + "-s" + step;
        if (lastItems == null || lastStep != step) {
            lastStep = step;
            StepItems.Carried carrying = carried;
            boolean touched = carriedTouched;
            carried = null;
            carriedTouched = false;
            boolean wasStreaming = interrupted != null && interrupted.step() == step;
            if (!wasStreaming && !touched) {
                lastItems = new StepItems(ids, turn.provider().name(), sink).startingEarly(readOnlyTools)
                        .carrying(carrying, false);
                return lastItems;
            }
            LOG.info("step {} was streaming when the turn's previous gateway stopped; calling the model again", step);
            lastItems = (wasStreaming ? StepItems.resumed(ids, turn.provider().name(), sink, interrupted.nextItem(),
                    interrupted.shown()) : new StepItems(ids, turn.provider().name(), sink)).startingEarly(readOnlyTools)
                    .carrying(carrying, touched);
            lastItems.withdraw();
        }
        // the step is called again (after a compaction): each call's items go on after the last call's
        lastItems = lastItems.nextAttempt();
        return lastItems;
    }

}
