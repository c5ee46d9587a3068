package io.turnstream.gateway.ownership;

import io.turnstream.gateway.loop.ApprovalDecisions;
import io.turnstream.gateway.loop.GatewayMetrics;
import io.turnstream.gateway.loop.TurnRegistry;
import io.turnstream.model.ControlMessage;
import io.turnstream.model.ToolResult;
import io.turnstream.model.Topics;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.ServiceMetrics;
import io.turnstream.runtime.TopicReader;
import java.io.IOException;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What Kafka tells the gateway's running turns: tool results ({@code llm.tool-results}), cancel
 * commands, the tool executor's start markers and approval asks and decisions ({@code llm.control}). Every gateway instance must see the results of its own turns,
 * wherever their partition is, so this consumer is assigned every partition of both topics (no
 * consumer group) and starts at their end: a gateway only waits for results of calls its running
 * turns made. New partitions are picked up periodically.
 */
public final class TurnInbox implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(TurnInbox.class);

    private final Topics topics;
    private final WireFormat format;
    private final TurnRegistry registry;
    private final ApprovalDecisions approvals;
    private final GatewayMetrics metrics;
    private final TopicReader reader;

    public TurnInbox(Properties kafkaProperties, Topics topics, WireFormat format, TurnRegistry registry,
              ApprovalDecisions approvals, GatewayMetrics metrics) {
        this.topics = topics;
        this.format = format;
        this.registry = registry;
        this.approvals = approvals;
        this.metrics = metrics;
        this.reader = new TopicReader("turnstream-gateway-inbox", kafkaProperties,
                List.of(topics.toolResults(), topics.control()), TopicReader.Start.END, this::dispatch);
    }

    /** Exports the reader's consumer metrics. */
    public void bindTo(ServiceMetrics serviceMetrics) {
        reader.bindTo(serviceMetrics);
    }

    private void dispatch(ConsumerRecord<String, byte[]> record) {
        try {
            if (record.topic().equals(topics.toolResults())) {
                ToolResult result = format.read(record.topic(), record.value(), ToolResult.class);
                String turnId = result.turnId() != null ? result.turnId() : record.key();
                if (turnId == null || result.callId() == null) {
                    throw new IOException("a tool result needs a turn id (or key) and a call id");
                }
                if (registry.deliver(turnId, result)) {
                    metrics.increment(GatewayMetrics.Counter.TOOL_RESULTS_RECEIVED);
                }
            } else {
                ControlMessage command = format.read(record.topic(), record.value(), ControlMessage.class);
                String turnId = command.turnId() != null ? command.turnId() : record.key();
                if (turnId == null) {
                    throw new IOException("a control command needs a turn id (or key)");
                }
                if (command.type() == ControlMessage.Type.CANCEL && registry.cancel(turnId, command.reason())) {
                    LOG.info("turn {} cancelled through {}: {}", turnId, topics.control(), command.reason());
                } else if (command.type() == ControlMessage.Type.TOOL_STARTED && command.at() != null) {
                    registry.toolStarted(turnId, command.callId(), command.at());
                } else if (command.type() == ControlMessage.Type.APPROVAL_REQUESTED && command.callId() != null) {
                    approvals.asked(turnId, command.callId());
                    registry.approvalRequested(turnId, command.callId());
                } else if (command.type() == ControlMessage.Type.APPROVAL && command.callId() != null
                        && command.approved() != null) {
                    approvals.decided(turnId, command.callId(), command.approved(), command.reason());
                }
            }
        } catch (IOException | RuntimeException e) {
            metrics.increment(GatewayMetrics.Counter.BAD_INPUT_RECORDS);
            LOG.warn("skipped an unreadable record at {}-{}@{}: {}", record.topic(), record.partition(),
                    record.offset(), e.getMessage());
        }
    }

    public boolean healthy() {
        return reader.healthy();
    }

    @Override
    public void close() {
        reader.close();
    }
}
