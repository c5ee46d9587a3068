package io.turnstream.runtime;

import static org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
import static org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.schema.SchemaRegistryException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.streams.errors.StreamsException;
import org.junit.jupiter.api.Test;

class ThreadReplacementBudgetTest {

    private final AtomicLong clock = new AtomicLong();
    /** The waits before replacements. */
    private final List<Duration> pauses = new ArrayList<>();
    private final ThreadReplacementBudget budget = new ThreadReplacementBudget(2, Duration.ofMinutes(5), clock::get,
            pauses::add);
    /** How a task's record read while the schema registry cannot be reached kills its stream thread. */
    private final RuntimeException registryDown = new StreamsException("Exception caught in process. taskId=0_1",
            new SchemaRegistryException("schema registry [http://127.0.0.1:8081/] cannot be reached", -1,
                    new ConnectException("Connection refused")));

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

    /**
     * A schema registry outage longer than the budget lasts: every thread that dies of it is replaced, after a backoff
     * that doubles up to its bound (before, the eleventh death within five minutes stopped the service), and the
     * budget is left whole for failures of ours, which wait for nothing.
     */
    @Test
    void aThreadThatDiesBecauseTheRegistryCannotBeReachedIsReplacedAfterABackoffWithoutUsingTheBudget() {
        for (int death = 0; death < 8; death++) {
            assertThat(budget.handle(registryDown)).isEqualTo(REPLACE_THREAD);
            clock.addAndGet(Duration.ofSeconds(5).toNanos());
        }
        assertThat(pauses).extracting(Duration::toSeconds).containsExactly(1L, 2L, 4L, 8L, 10L, 10L, 10L, 10L);

        RuntimeException ours = new RuntimeException("Error encountered sending record to topic llm.upserts");
        assertThat(budget.handle(ours)).isEqualTo(REPLACE_THREAD);
        assertThat(budget.handle(ours)).isEqualTo(REPLACE_THREAD);
        assertThat(budget.handle(ours)).isEqualTo(SHUTDOWN_CLIENT);
        assertThat(budget.reportedFailure()).isSameAs(ours);
        assertThat(pauses).as("no wait before a replacement for a failure of ours").hasSize(8);
    }

    @Test
    void anOutageAfterAQuietMinuteBacksOffFromTheFirstBackoffAgain() {
        budget.handle(registryDown);
        budget.handle(registryDown);
        budget.handle(registryDown);
        clock.addAndGet(ThreadReplacementBudget.REGISTRY_QUIET.plusSeconds(1).toNanos());

        budget.handle(registryDown);

        assertThat(pauses).extracting(Duration::toSeconds).containsExactly(1L, 2L, 4L, 1L);
    }

    @Test
    void withNoReplacementsAllowedTheFirstFailureStopsTheClientAndIsReported() {
        ThreadReplacementBudget none = new ThreadReplacementBudget(0, Duration.ofMinutes(5), clock::get, pauses::add);
        RuntimeException failure = new RuntimeException("commit refused");

        assertThat(none.handle(failure)).isEqualTo(SHUTDOWN_CLIENT);
        assertThat(none.reportedFailure()).isSameAs(failure);
    }
}
