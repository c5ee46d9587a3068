package io.turnstream.gateway.loop;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.gateway.loop.StepAttempts.Input;
import io.turnstream.gateway.loop.StepAttempts.Output;
import io.turnstream.gateway.provider.ErrorCodes;
import io.turnstream.gateway.provider.RetryPolicy;
import io.turnstream.gateway.provider.StepOutcome;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.Json;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The step's attempts without HTTP, threads or a clock: each test feeds outcomes and ticks and reads the outputs. */
class StepAttemptsTest {

    private static final RetryPolicy POLICY = new RetryPolicy(3, Duration.ofSeconds(1), Duration.ofSeconds(30));
    private static final StepOutcome DONE = new StepOutcome(ResponseStatus.COMPLETE, "stop", null, List.of(),
            Json.MAPPER.createArrayNode(), null, false, false, null, 3);
    private static final StepOutcome RATE_LIMITED = StepOutcome.refused(ErrorInfo.of("rate_limit_error", "slow down"),
            true, false, Duration.ofSeconds(2), 0);
    private static final StepOutcome OVERLOADED = StepOutcome.refused(ErrorInfo.of("overloaded_error", "busy"), true,
            true, null, 0);
    private static final StepOutcome STALLED = StepOutcome.refused(ErrorInfo.of(ErrorCodes.STREAM_STALLED, "silent"),
            true, false, null, 4);

    private static StepAttempts attempts(String fallback) {
        return new StepAttempts("big", fallback, POLICY, new SplittableRandom(1));
    }

    private static Input ended(StepOutcome outcome, boolean withdrawn, long now) {
        return new Input.AttemptEnded(outcome, withdrawn, false, now);
    }

    @Test
    void aCompleteAttemptEndsTheStep() {
        StepAttempts attempts = attempts(null);
        assertThat(attempts.start()).containsExactly(new Output.Call(1, "big", true));
        assertThat(attempts.on(ended(DONE, false, 0))).containsExactly(new Output.Ended(DONE, null));
        assertThat(attempts.state()).isEqualTo(StepAttempts.State.ENDED);
    }

    @Test
    void aRateLimitWaitsExactlyWhatTheProviderAskedForThenCallsAgain() {
        StepAttempts attempts = attempts(null);
        attempts.start();
        List<Output> out = attempts.on(ended(RATE_LIMITED, false, 1_000));
        assertThat(out).containsExactly(new Output.Failed(1, "big", RATE_LIMITED.error()),
                new Output.Withdrawn("big", null), new Output.Retrying(2, Duration.ofSeconds(2), RATE_LIMITED.error()),
                new Output.WaitUntil(3_000));
        assertThat(attempts.on(new Input.Tick(2_999))).containsExactly(new Output.WaitUntil(3_000));
        assertThat(attempts.on(new Input.Tick(3_000))).containsExactly(new Output.Call(2, "big", true));
    }

    @Test
    void theLastAttemptIsNotWithdrawnAndItsFailureEndsTheStep() {
        StepAttempts attempts = attempts(null);
        attempts.start();
        attempts.on(ended(RATE_LIMITED, false, 0));
        attempts.on(new Input.Tick(2_000));
        attempts.on(ended(RATE_LIMITED, false, 2_000));
        assertThat(attempts.on(new Input.Tick(4_000))).containsExactly(new Output.Call(3, "big", false));
        List<Output> out = attempts.on(ended(RATE_LIMITED, false, 4_000));
        assertThat(out.get(out.size() - 1)).isEqualTo(new Output.Ended(RATE_LIMITED, "giving up after 3 attempts"));
    }

    @Test
    void anOverloadFallsBackAtOnceThenBacksOffOnTheFallbackModel() {
        StepAttempts attempts = attempts("small");
        attempts.start();
        assertThat(attempts.on(ended(OVERLOADED, false, 0))).containsExactly(
                new Output.Failed(1, "big", OVERLOADED.error()), new Output.Withdrawn("big", null),
                new Output.FellBack("big", "small", OVERLOADED.error()), new Output.Call(2, "small", true));
        assertThat(attempts.model()).isEqualTo("small");
        List<Output> out = attempts.on(ended(OVERLOADED, false, 0));
        assertThat(out).hasAtLeastOneElementOfType(Output.Retrying.class).doesNotHaveAnyElementsOfTypes(
                Output.FellBack.class);
        Output.WaitUntil wait = (Output.WaitUntil) out.get(out.size() - 1);
        // the backoff before the second retry is 2 s with jitter: between 1 and 2 s
        assertThat(wait.at()).isBetween(1_000L, 2_000L);
    }

    @Test
    void aStallAfterOutputIsRetriedOnlyWhenItsItemsWereWithdrawn() {
        StepAttempts withdrawn = attempts("small");
        withdrawn.start();
        assertThat(withdrawn.on(ended(STALLED, true, 0))).contains(new Output.Stalled(STALLED.error()),
                new Output.FellBack("big", "small", STALLED.error()));

        StepAttempts shown = attempts("small");
        shown.start();
        List<Output> out = shown.on(ended(STALLED, false, 0));
        assertThat(out).containsExactly(new Output.Failed(1, "big", STALLED.error()), new Output.Stalled(STALLED.error()),
                new Output.Ended(STALLED, null));
    }

    @Test
    void aRetryAfterLongerThanTheLongestWaitGivesUp() {
        StepAttempts attempts = attempts(null);
        attempts.start();
        StepOutcome tooLong = StepOutcome.refused(ErrorInfo.of("rate_limit_error", "later"), true, false,
                Duration.ofMinutes(5), 0);
        List<Output> out = attempts.on(ended(tooLong, false, 0));
        assertThat(((Output.Ended) out.get(out.size() - 1)).gaveUp()).contains("300 s");
    }

    @Test
    void anAttemptWithdrawnThenGivenUpOnReportsItsUsageOnceWithTheWithdrawal() {
        StepAttempts attempts = attempts(null);
        attempts.start();
        StreamPayload.Usage used = new StreamPayload.Usage(300, 20, 320);
        StepOutcome tooLong = new StepOutcome(ResponseStatus.ERROR, null, used, List.of(), Json.MAPPER.createArrayNode(),
                ErrorInfo.of("rate_limit_error", "later"), true, false, Duration.ofMinutes(5), 0);

        List<Output> out = attempts.on(ended(tooLong, false, 0));

        assertThat(out).contains(new Output.Withdrawn("big", used));
        Output.Ended ended = (Output.Ended) out.get(out.size() - 1);
        assertThat(ended.gaveUp()).contains("300 s");
        assertThat(ended.outcome().usage()).as("counted with the withdrawal already").isNull();
        assertThat(ended.outcome().error()).isEqualTo(tooLong.error());
    }

    @Test
    void aCancelDuringTheBackoffEndsTheStepAbortedAndACancelledAttemptIsNotRetried() {
        StepAttempts waiting = attempts(null);
        waiting.start();
        waiting.on(ended(RATE_LIMITED, false, 0));
        List<Output> out = waiting.on(new Input.Cancel());
        assertThat(((Output.Ended) out.get(0)).outcome().status()).isEqualTo(ResponseStatus.ABORTED);

        StepAttempts calling = attempts(null);
        calling.start();
        assertThat(calling.on(new Input.AttemptEnded(RATE_LIMITED, false, true, 0)))
                .endsWith(new Output.Ended(RATE_LIMITED, null));
    }

    @Test
    void aFailureNoRetryCuresEndsTheStep() {
        StepAttempts attempts = attempts("small");
        attempts.start();
        StepOutcome invalid = StepOutcome.refused(ErrorInfo.of("invalid_request_error", "bad"), false, false, null, 0);
        assertThat(attempts.on(ended(invalid, false, 0))).containsExactly(new Output.Failed(1, "big", invalid.error()),
                new Output.Ended(invalid, null));
    }
}
