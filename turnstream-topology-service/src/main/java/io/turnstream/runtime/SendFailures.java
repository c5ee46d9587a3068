package io.turnstream.runtime;

import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.streams.errors.DefaultProductionExceptionHandler;
import org.apache.kafka.streams.errors.ErrorHandlerContext;
import org.apache.kafka.streams.errors.StreamsException;

/**
 * Kafka Streams' default production exception handler that also remembers the first send it gave up
 * on. With exactly-once, a stream thread can die of a later send that finds the producer already in
 * an error state, naming its own topic; the report names the record that failed instead.
 */
public final class SendFailures extends DefaultProductionExceptionHandler {

    /** The Streams property holding the application's {@link Recorder} (an object, not a string). */
    static final String RECORDER = "turnstream.send-failures.recorder";

    private Recorder recorder;

    @Override
    public void configure(Map<String, ?> configs) {
        super.configure(configs);
        recorder = (Recorder) configs.get(RECORDER);
    }

    @Override
    public Response handleError(ErrorHandlerContext context, ProducerRecord<byte[], byte[]> record, Exception exception) {
        Response response = super.handleError(context, record, exception);
        if (recorder != null && response.result() == Result.FAIL) {
            recorder.first.compareAndSet(null, new StreamsException(
                    "Error encountered sending record to topic " + record.topic(), exception));
        }
        return response;
    }

    /** The first send the application gave up on, shared by its tasks' handlers. */
    static final class Recorder {
        private final AtomicReference<Throwable> first = new AtomicReference<>();

        Throwable first() {
            return first.get();
        }
    }
}
