package io.turnstream.gateway;

import io.turnstream.gateway.loop.ThreadAllowances;
import io.turnstream.runtime.TopicReader;
import java.util.List;
import java.util.Properties;

/**
 * The compacted {@code llm.thread-allowances}, read whole from its beginning without a consumer group and
 * then followed, into the {@link ThreadAllowances} every turn of this gateway consults: a tool allowed
 * for a thread on any gateway, at any time before, is allowed here.
 */
final class ThreadAllowanceTopic implements AutoCloseable {

    private final ThreadAllowances allowances = new ThreadAllowances();
    private final TopicReader reader;

    ThreadAllowanceTopic(Properties kafkaProperties, String topic) {
        this.reader = new TopicReader("turnstream-gateway-allowances", kafkaProperties, List.of(topic),
                TopicReader.Start.BEGINNING, record -> allowances.apply(record.key(), record.value() != null));
    }

    ThreadAllowances allowances() {
        return allowances;
    }

    boolean healthy() {
        return reader.healthy();
    }

    @Override
    public void close() {
        reader.close();
    }
}
