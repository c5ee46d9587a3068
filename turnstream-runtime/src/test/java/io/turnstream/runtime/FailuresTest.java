package io.turnstream.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.streams.errors.StreamsException;
import org.junit.jupiter.api.Test;

class FailuresTest {

    @Test
    void aSendErrorSurfacingInProcessStillNamesTheTopicAndTheRootCause() {
        RecordTooLargeException root = new RecordTooLargeException("The request included a message larger than the max");
        StreamsException send = new StreamsException("Error encountered sending record to topic llm.upserts.tiny for task 0_1", root);
        StreamsException process = new StreamsException("Exception caught in process. taskId=0_1", send);

        assertThat(Failures.describe(process))
                .isEqualTo("Exception caught in process. taskId=0_1: Error encountered sending record to topic llm.upserts.tiny"
                        + " for task 0_1 (caused by RecordTooLargeException: The request included a message larger than the max)");
    }

    @Test
    void aMessageAlreadyCarryingItsCauseIsNotRepeated() {
        IllegalStateException root = new IllegalStateException("disk full");
        RuntimeException outer = new RuntimeException("cannot write the checkpoint: disk full", root);

        assertThat(Failures.describe(outer))
                .isEqualTo("cannot write the checkpoint: disk full (caused by IllegalStateException: disk full)");
    }

    @Test
    void messagesSpanningLinesBecomeOneLine() {
        RuntimeException failure = new RuntimeException("first line\n  second line");

        assertThat(Failures.describe(failure)).isEqualTo("first line second line");
    }

    @Test
    void everyErrorAnEpochBumpShowsAsCountsWhereverItSitsInTheChain() {
        assertThat(Failures.epochBumped(new InvalidProducerEpochException("Producer attempted to produce with an old epoch")))
                .isTrue();
        assertThat(Failures.epochBumped(new ProducerFencedException("There is a newer producer with the same transactionalId")))
                .isTrue();
        assertThat(Failures.epochBumped(new KafkaException("Cannot execute transactional method because we are in an error "
                + "state", new InvalidTxnStateException("The producer attempted a transactional operation in an invalid state"))))
                .as("as the producer wraps it once failed").isTrue();
        assertThat(Failures.epochBumped(new TimeoutException("Timeout expired after 10000ms while awaiting EndTxn"))).isFalse();
    }
}
