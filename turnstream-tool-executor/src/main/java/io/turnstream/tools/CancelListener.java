package io.turnstream.tools;

import io.turnstream.model.ControlMessage;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.TopicReader;
import java.io.IOException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Consumer;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads {@code llm.control} with a {@link TopicReader}, every partition, so a cancel or an approval
 * decision takes effect while the tool-call partitions are paused or busy. It starts a while back in time ({@code since}), so an
 * instance that takes over a turn still knows the turn was cancelled. After each poll it says how far it has read
 * ({@code read}): the scheduler starts no call before the listener has read past the call's {@link ControlFence}.
 */
final class CancelListener implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(CancelListener.class);

    private final String topic;
    private final WireFormat wire;
    private final Consumer<String> cancelTurn;
    private final Decisions decisions;
    private final TopicReader.Builder reading;
    private TopicReader reader;

    /** Receives approval decisions on tool calls. */
    @FunctionalInterface
    interface Decisions {
        void decide(String turnId, String callId, boolean approved, String reason);
    }

    /**
     * @param read      told after each poll where the listener reads each partition, every record before it handled
     * @param onFailure told when reading stopped for good: the executor no longer sees cancels
     */
    CancelListener(Properties consumerProps, String topic, WireFormat wire, Instant since, Consumer<String> cancelTurn,
                   Decisions decisions, Consumer<Map<TopicPartition, Long>> read, Consumer<Throwable> onFailure) {
        this.topic = topic;
        this.wire = wire;
        this.cancelTurn = cancelTurn;
        this.decisions = decisions;
        this.reading = TopicReader.reading(consumerProps.getProperty(CommonClientConfigs.CLIENT_ID_CONFIG, "turnstream-tool-cancels"),
                consumerProps, List.of(topic)).from(TopicReader.Start.since(since)).afterEachPoll(read).onFailure(onFailure);
    }

    CancelListener start() {
        reader = reading.start((record, polledAt) -> handle(record));
        return this;
    }

    private void handle(ConsumerRecord<String, byte[]> record) {
        ControlMessage message;
        try {
            message = wire.read(topic, record.value(), ControlMessage.class);
        } catch (IOException | IllegalArgumentException e) {
            LOG.warn("skipping unreadable control record {}-{}@{}: {}", record.topic(), record.partition(), record.offset(), e.getMessage());
            return;
        }
        if (message.type() == ControlMessage.Type.CANCEL) {
            String turnId = message.turnId() != null ? message.turnId() : record.key();
            if (turnId != null) {
                LOG.info("turn {} cancelled{}", turnId, message.reason() == null ? "" : ": " + message.reason());
                cancelTurn.accept(turnId);
            }
        } else if (message.type() == ControlMessage.Type.APPROVAL && message.callId() != null && message.approved() != null) {
            String turnId = message.turnId() != null ? message.turnId() : record.key();
            LOG.info("tool call {} of turn {} {}", message.callId(), turnId, message.approved() ? "approved" : "denied");
            decisions.decide(turnId, message.callId(), message.approved(), message.reason());
        }
    }

    @Override
    public void close() {
        if (reader != null) {
            reader.close();
        }
    }
}
