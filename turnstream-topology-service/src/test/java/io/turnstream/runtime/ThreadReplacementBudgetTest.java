package io.turnstream.runtime;

import static org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
import static org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ThreadReplacementBudgetTest {

    private final AtomicLong clock = new AtomicLong();
    private final ThreadReplacementBudget budget = new ThreadReplacementBudget(2, Duration.ofMinutes(5), clock::get);

    @Test
    void aFailingThreadIsReplacedUntilTheBudgetIsSpentThenTheClientStopsReportingTheFailureThatIsNoConsequence() {
        RuntimeException consequence = new RuntimeException("Error encountered trying to send record to topic app-turns-changelog",
                new IllegalStateException("Cannot execute transactional method because we are in an error state"));
        RuntimeException failure = new RuntimeException("Error encountered sending record to topic llm.upserts");

        assertThat(budget.handle(consequence)).isEqualTo(REPLACE_THREAD);
        assertThat(budget.handle(failure)).isEqualTo(REPLACE_THREAD);
        assertThat(budget.handle(consequence)).isEqualTo(SHUTDOWN_CLIENT);
        assertThat(budget.reportedFailure()).isSameAs(failure);
    }

    @Test
    void aFailureAfterAQuietWindowIsTheFirstOfANewEpisode() {
        RuntimeException old = new RuntimeException("broker blip");
        RuntimeException fresh = new RuntimeException("another blip");

        budget.handle(old);
        clock.addAndGet(Duration.ofMinutes(6).toNanos());
        budget.handle(fresh);

        assertThat(budget.reportedFailure()).isSameAs(fresh);
    }

    @Test
    void failuresFurtherApartThanTheWindowAreBlipsNotALoop() {
        RuntimeException failure = new RuntimeException("broker blip");

        assertThat(budget.handle(failure)).isEqualTo(REPLACE_THREAD);
        assertThat(budget.handle(failure)).isEqualTo(REPLACE_THREAD);
        clock.addAndGet(Duration.ofMinutes(6).toNanos());

        assertThat(budget.handle(failure)).isEqualTo(REPLACE_THREAD);
    }

    @Test
    void withNoReplacementsAllowedTheFirstFailureStopsTheClientAndIsReported() {
        ThreadReplacementBudget none = new ThreadReplacementBudget(0, Duration.ofMinutes(5), clock::get);
        RuntimeException failure = new RuntimeException("commit refused");

        assertThat(none.handle(failure)).isEqualTo(SHUTDOWN_CLIENT);
        assertThat(none.reportedFailure()).isSameAs(failure);
    }
}
