package io.turnstream.gateway.loop;

import io.turnstream.gateway.provider.ErrorCodes;
import io.turnstream.gateway.provider.RetryPolicy;
import io.turnstream.gateway.provider.StepOutcome;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload.Usage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.random.RandomGenerator;

/**
 * The attempts of one model step, as a plain state machine: which model each call goes to, whether a
 * failed attempt is withdrawn and made again (backing off, or falling back to another model), and
 * when the step gives up. It makes no call, sleeps not and reads no clock: it is fed each attempt's
 * outcome, the clock's ticks and a cancel, and answers with what to do ({@link Output}). The
 * {@link LoopMachine} runs it within the turn and its shell, {@link AgentLoop}, makes the HTTP calls and waits.
 *
 * <p>A transient failure (rate limit, overload, broken or stalled stream) is retried within the
 * retry budget, also after output has started, provided the attempt's items were withdrawn. An
 * overload or a stall switches to the fallback model for the rest of the turn, without waiting.
 */
public final class StepAttempts {

    /** Where the step is. */
    public enum State { CALLING, BACKING_OFF, ENDED }

    /** What the step learns. */
    public sealed interface Input {
        /**
         * The attempt's model call ended.
         *
         * @param withdrawn the attempt's items were withdrawn (the failure was one a retry may cure)
         * @param cancelled the turn was cancelled meanwhile
         * @param now when it ended (epoch millis)
         */
        record AttemptEnded(StepOutcome outcome, boolean withdrawn, boolean cancelled, long now) implements Input {
        }

        /** The time is now {@code now} (epoch millis). */
        record Tick(long now) implements Input {
        }

        record Cancel() implements Input {
        }
    }

    /** What the shell does, in order. */
    public sealed interface Output {
        /**
         * Call the model.
         *
         * @param withdrawOnFailure a failure a retry may cure withdraws the attempt's items: another call follows
         */
        record Call(int attempt, String model, boolean withdrawOnFailure) implements Output {
        }

        /** The attempt failed (counted and logged). */
        record Failed(int attempt, String model, ErrorInfo error) implements Output {
        }

        record Stalled(ErrorInfo error) implements Output {
        }

        /** The failed attempt is withdrawn: what it used is counted apart, the next attempt's items go on after it. */
        record Withdrawn(String model, Usage usage) implements Output {
        }

        record FellBack(String from, String to, ErrorInfo error) implements Output {
        }

        record Retrying(int nextAttempt, Duration delay, ErrorInfo error) implements Output {
        }

        /** Nothing to do until {@code at} (epoch millis) unless cancelled: then feed a {@link Input.Tick}. */
        record WaitUntil(long at) implements Output {
        }

        /** The step ended with this outcome; {@code gaveUp} says why a retryable failure was not retried. */
        record Ended(StepOutcome outcome, String gaveUp) implements Output {
        }
    }

    private final RetryPolicy policy;
    private final String fallbackModel;
    private final RandomGenerator random;
    private String model;
    private State state = State.CALLING;
    private int attempt;
    private long retryAt;

    /**
     * @param model the model calls go to now
     * @param fallbackModel the model an overload or a stall switches to, or null
     * @param random draws the backoff's jitter
     */
    public StepAttempts(String model, String fallbackModel, RetryPolicy policy, RandomGenerator random) {
        this.model = model;
        this.fallbackModel = fallbackModel;
        this.policy = policy;
        this.random = random;
    }

    public State state() {
        return state;
    }

    /** The model calls go to now: the turn's model, or the fallback model once it fell back. */
    public String model() {
        return model;
    }

    /** The first call. */
    public List<Output> start() {
        return List.of(call());
    }

    public List<Output> on(Input input) {
        return switch (state) {
            case CALLING -> input instanceof Input.AttemptEnded ended ? attemptEnded(ended) : List.of();
            case BACKING_OFF -> backingOff(input);
            case ENDED -> List.of();
        };
    }

    private List<Output> backingOff(Input input) {
        if (input instanceof Input.Cancel) {
            return end(StepOutcome.abortedBeforeStream(), null, new ArrayList<>());
        }
        if (input instanceof Input.Tick tick) {
            return tick.now() >= retryAt ? List.of(call()) : List.of(new Output.WaitUntil(retryAt));
        }
        return List.of();
    }

    private List<Output> attemptEnded(Input.AttemptEnded ended) {
        StepOutcome outcome = ended.outcome();
        List<Output> out = new ArrayList<>();
        if (outcome.status() != ResponseStatus.ERROR) {
            return end(outcome, null, out);
        }
        out.add(new Output.Failed(attempt, model, outcome.error()));
        boolean stalled = ErrorCodes.STREAM_STALLED.equals(outcome.error().code());
        if (stalled) {
            out.add(new Output.Stalled(outcome.error()));
        }
        boolean recoverable = outcome.retryable() && (outcome.itemsPublished() == 0 || ended.withdrawn());
        if (!recoverable || ended.cancelled()) {
            return end(outcome, null, out);
        }
        out.add(new Output.Withdrawn(model, outcome.usage()));
        // its usage is counted with the withdrawal: a step that gives up on it ends without it, or it counts twice
        StepOutcome counted = withoutUsage(outcome);
        if ((outcome.overloaded() || stalled) && canFallBack()) {
            out.add(new Output.FellBack(model, fallbackModel, outcome.error()));
            model = fallbackModel;
            out.add(call());
            return out;
        }
        if (attempt >= policy.maxAttempts()) {
            return end(counted, "giving up after " + attempt + " attempts", out);
        }
        Duration delay = policy.delay(attempt, outcome.retryAfter(), random);
        if (delay == null) {
            return end(counted, "the provider asks to retry after " + outcome.retryAfter().toSeconds()
                    + " s, longer than the " + policy.maxDelay().toSeconds() + " s we wait", out);
        }
        out.add(new Output.Retrying(attempt + 1, delay, outcome.error()));
        state = State.BACKING_OFF;
        retryAt = ended.now() + delay.toMillis();
        out.add(new Output.WaitUntil(retryAt));
        return out;
    }

    private Output call() {
        attempt++;
        state = State.CALLING;
        return new Output.Call(attempt, model, attempt < policy.maxAttempts() || canFallBack());
    }

    private List<Output> end(StepOutcome outcome, String gaveUp, List<Output> out) {
        state = State.ENDED;
        out.add(new Output.Ended(outcome, gaveUp));
        return out;
    }

    private static StepOutcome withoutUsage(StepOutcome outcome) {
        return new StepOutcome(outcome.status(), outcome.finishReason(), null, outcome.toolCalls(),
                outcome.assistantContent(), outcome.error(), outcome.retryable(), outcome.overloaded(),
                outcome.retryAfter(), outcome.itemsPublished());
    }

    private boolean canFallBack() {
        return fallbackModel != null && !fallbackModel.equals(model);
    }
}
