package io.turnstream.topology;

import io.turnstream.model.DeadLetterHeaders;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Routes input the topology cannot use to {@code llm.raw-events.dlq}: the original key and bytes,
 * the reason in the header {@code turnstream.dlq.reason}, and where it came from. Each record is
 * counted in the {@code dead-letter-total} metric and logged once with its offset.
 */
final class DeadLetters {


    private static final Logger LOG = LoggerFactory.getLogger(DeadLetters.class);

    private final ProcessorContext<String, byte[]> context;
    private final Sensor counter;

    DeadLetters(ProcessorContext<String, byte[]> context, Sensor counter) {
        this.context = context;
        this.counter = counter;
    }

    void send(Record<String, byte[]> record, String reason) {
        String source = context.recordMetadata()
                .map(m -> m.topic() + "-" + m.partition() + "@" + m.offset())
                .orElse("unknown");
        LOG.warn("dead-lettered {} (key {}): {}", source, record.key(), reason);
        Headers headers = new RecordHeaders(record.headers().toArray());
        headers.add(DeadLetterHeaders.REASON, reason.getBytes(StandardCharsets.UTF_8));
        headers.add(DeadLetterHeaders.SOURCE, source.getBytes(StandardCharsets.UTF_8));
        context.forward(new Record<>(record.key(), record.value(), record.timestamp(), headers), UpsertTopology.DEAD_LETTER_SINK);
        counter.record();
    }
}
