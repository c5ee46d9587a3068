package io.turnstream.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.apache.kafka.streams.errors.ProductionExceptionHandler.Result;
import org.apache.kafka.streams.errors.internals.DefaultErrorHandlerContext;
import org.apache.kafka.streams.processor.TaskId;
import org.junit.jupiter.api.Test;

class SendFailuresTest {

    /** Where the record being sent came from: a raw event processed by task 0_0. */
    private static final ErrorHandlerContext CONTEXT = new DefaultErrorHandlerContext(null, "llm.raw-events", 0, 42,
            new RecordHeaders(), "upserts", new TaskId(0, 0), 0L, new byte[0], new byte[0]);

    private final SendFailures.Recorder recorder = new SendFailures.Recorder();
    private final SendFailures handler = configuredHandler();

    @Test
    void theFirstSendGivenUpOnIsRememberedWithItsTopic() {
        assertThat(handler.handleError(CONTEXT, record("llm.upserts"), new RecordTooLargeException("too large")).result())
                .isEqualTo(Result.FAIL);
        handler.handleError(CONTEXT, record("app-turns-changelog"), new RecordTooLargeException("later"));

        assertThat(Failures.describe(recorder.first()))
                .contains("llm.upserts").contains("RecordTooLargeException").doesNotContain("changelog");
    }

    @Test
    void aRetriedSendIsNotAFailure() {
        assertThat(handler.handleError(CONTEXT, record("llm.upserts"), new NotEnoughReplicasException("wait")).result())
                .isEqualTo(Result.RETRY);

        assertThat(recorder.first()).isNull();
    }

    private SendFailures configuredHandler() {
        SendFailures configured = new SendFailures();
        configured.configure(Map.of(SendFailures.RECORDER, recorder));
        return configured;
    }

    private static ProducerRecord<byte[], byte[]> record(String topic) {
        return new ProducerRecord<>(topic, new byte[0], new byte[0]);
    }
}
