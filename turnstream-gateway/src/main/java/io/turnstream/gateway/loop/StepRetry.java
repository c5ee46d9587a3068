package io.turnstream.gateway.loop;

import io.turnstream.gateway.loop.GatewayMetrics.Counter;
import io.turnstream.gateway.provider.CancelSignal;
import io.turnstream.gateway.provider.Conversation;
import io.turnstream.gateway.provider.ErrorCodes;
import io.turnstream.gateway.provider.ModelRequest;
import io.turnstream.gateway.provider.ProviderClient;
import io.turnstream.gateway.provider.StepItems;
import io.turnstream.gateway.provider.StepOutcome;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload.Usage;
import java.time.Duration;
import java.util.List;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One step's model call, recovered where it can be: a transient failure (rate limit, overload,
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
    private final ProviderClient client;
    private final GatewayMetrics metrics;
    private final TurnStatusReporter status;
    private final StepItems.Sink sink;
    private final CancelSignal cancel;
    private final BiConsumer<String, Usage> failedUsage;
    private final TurnProgress.Interrupted interrupted;
    /** The interrupted step's items: withdrawn once, then the latest call's. */
    private StepItems resumedStep;
    private String model;

    /**
     * @param progress where the turn starts: the model it uses now and the step to take back, if any
     * @param failedUsage receives what each withdrawn attempt used, with the model that served it
     */
    StepRetry(AgentLoop.Turn turn, TurnProgress progress, LoopConfig config, ProviderClient client,
              GatewayMetrics metrics, TurnStatusReporter status, StepItems.Sink sink, CancelSignal cancel,
              BiConsumer<String, Usage> failedUsage) {
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
    }

    /** The model calls go to now: the turn's model, or the fallback model once it fell back. */
    String model() {
        return model;
    }

    StepOutcome call(int step, List<Conversation.Entry> conversation) {
        StepItems items = firstAttemptItems(step);
        for (int attempt = 1; ; attempt++) {
            items.withdrawOnRetryableFailure(attempt < config.retry().maxAttempts() || canFallBack());
            ModelRequest request = new ModelRequest(model, turn.system(), conversation, turn.tools(),
                    config.maxTokens(), config.thinkingBudget());
            metrics.increment(Counter.MODEL_CALLS);
            status.callStarting(attempt);
            StepOutcome outcome = client.call(turn.provider().adapter(), turn.provider().endpoint(), request, items, cancel);
            if (outcome.status() != ResponseStatus.ERROR) {
                return outcome;
            }
            metrics.increment(Counter.PROVIDER_ERRORS);
            boolean stalled = ErrorCodes.STREAM_STALLED.equals(outcome.error().code());
            if (stalled) {
                metrics.increment(Counter.STALLS);
                status.stalled(outcome.error());
            }
            LOG.warn("step {} attempt {} with model {} failed: {}: {}", step, attempt, model, outcome.error().code(),
                    outcome.error().message());
            boolean recoverable = outcome.retryable() && (outcome.itemsPublished() == 0 || items.withdrawn());
            if (!recoverable || cancel.isCancelled()) {
                return outcome;
            }
            failedUsage.accept(model, outcome.usage());
            items = items.nextAttempt();
            if ((outcome.overloaded() || stalled) && canFallBack()) {
                LOG.warn("model {} is {}; falling back to {} for the rest of the turn", model,
                        stalled ? "stalled" : "overloaded", turn.fallbackModel());
                metrics.increment(Counter.FALLBACKS);
                status.fallback(model, turn.fallbackModel(), outcome.error());
                model = turn.fallbackModel();
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
            if (cancel.sleep(delay)) {
                return StepOutcome.abortedBeforeStream();
            }
        }
    }

    /**
     * A new step's items; for the step another gateway was streaming when it stopped, what it had
     * shown is withdrawn first, and the call starts over with the ids after it.
     */
    private StepItems firstAttemptItems(int step) {
        String ids = turn.runId() + "-s" + step;
        if (interrupted == null || interrupted.step() != step) {
            return new StepItems(ids, turn.provider().name(), sink);
        }
        if (resumedStep == null) {
            LOG.info("step {} was streaming when the turn's previous gateway stopped; calling the model again", step);
            resumedStep = StepItems.resumed(ids, turn.provider().name(), sink, interrupted.nextItem(),
                    interrupted.shown());
            resumedStep.withdraw();
        }
        // the step may be called again (after a compaction): each call's items go on after the last call's
        resumedStep = resumedStep.nextAttempt();
        return resumedStep;
    }

    private boolean canFallBack() {
        return turn.fallbackModel() != null && !turn.fallbackModel().equals(model);
    }
}
