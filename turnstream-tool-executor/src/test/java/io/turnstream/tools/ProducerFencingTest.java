package io.turnstream.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.errors.FencedInstanceIdException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.TimeoutException;
import org.junit.jupiter.api.Test;

/** When a fenced executor goes on (its transaction was aborted at the timeout) and when it stops (another instance took over). */
class ProducerFencingTest {

    private static final String INSTANCE = "executor-b";
    private static final String OURS = "executor-b-5f0c";
    private static final ProducerFencedException FENCED = new ProducerFencedException(
            "There is a newer producer with the same transactionalId which fences the current one.");

    private static ProducerFencing holder(Optional<String> memberId) {
        return new ProducerFencing(INSTANCE, instanceId -> {
            assertThat(instanceId).isEqualTo(INSTANCE);
            return memberId;
        });
    }

    @Test
    void aFencedProducerWhoseInstanceIdTheGroupStillGivesToUsHadItsTransactionAbortedAtTheTimeout() {
        assertThat(holder(Optional.of(OURS)).causeOf(FENCED, OURS)).isEqualTo(ProducerFencing.Cause.TIMED_OUT_TRANSACTION);
    }

    @Test
    void aFencedProducerWhoseInstanceIdAnotherMemberHoldsWasTakenOver() {
        assertThat(holder(Optional.of("executor-b-9a1d")).causeOf(FENCED, OURS)).isEqualTo(ProducerFencing.Cause.ANOTHER_INSTANCE);
    }

    @Test
    void whenNoMemberHoldsOurInstanceIdOrWeAreNoMemberTheExecutorStops() {
        assertThat(holder(Optional.empty()).causeOf(FENCED, OURS)).isEqualTo(ProducerFencing.Cause.ANOTHER_INSTANCE);
        assertThat(holder(Optional.of("")).causeOf(FENCED, "")).as("not joined: no member id to compare")
                .isEqualTo(ProducerFencing.Cause.ANOTHER_INSTANCE);
    }

    @Test
    void aFencedGroupInstanceIsAnotherInstanceWithoutAskingTheGroup() {
        AtomicInteger asked = new AtomicInteger();
        ProducerFencing fencing = new ProducerFencing(INSTANCE, instanceId -> {
            asked.incrementAndGet();
            return Optional.of(OURS);
        });
        assertThat(fencing.causeOf(new FencedInstanceIdException("fenced"), OURS)).isEqualTo(ProducerFencing.Cause.ANOTHER_INSTANCE);
        assertThat(asked).hasValue(0);
    }

    @Test
    void whenTheGroupCannotBeAskedTheExecutorStopsToBeSafe() {
        ProducerFencing unreachable = new ProducerFencing(INSTANCE, instanceId -> {
            throw new TimeoutException("Timed out waiting for a node assignment");
        });
        assertThat(unreachable.causeOf(FENCED, OURS)).isEqualTo(ProducerFencing.Cause.ANOTHER_INSTANCE);
    }
}
