package io.turnstream.gateway.ownership;

import io.turnstream.gateway.loop.ApprovalDecisions;
import io.turnstream.gateway.loop.GatewayMetrics;
import io.turnstream.gateway.loop.TurnRegistry;
import io.turnstream.model.ControlMessage;
import io.turnstream.model.ToolResult;
import io.turnstream.model.Topics;
import io.turnstream.model.WireFormat;
import io.turnstream.schema.SchemaRegistryException;
import java.io.IOException;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a record of {@code llm.tool-results} or {@code llm.control} goes, without Kafka: a tool
 * result to its running turn, a cancel to its turn (or kept for a turn not started here yet), an
 * executor's start marker and ask to the turn, asks and decisions to the approval rounds. A record
 * that cannot be read is counted and skipped; nothing else is lost. One that cannot be read for now (on Avro, a
 * schema registry that cannot be reached) is neither: the {@link SchemaRegistryException} goes to the inbox's
 * reader, which reads the record again after a backoff.
 */
final class InboxRouting {

    private static final Logger LOG = LoggerFactory.getLogger(InboxRouting.class);

    private final Topics topics;
    private final WireFormat format;
    private final TurnRegistry registry;
    private final ApprovalDecisions approvals;
    private final GatewayMetrics metrics;

    InboxRouting(Topics topics, WireFormat format, TurnRegistry registry, ApprovalDecisions approvals,
                 GatewayMetrics metrics) {
        this.topics = topics;
        this.format = format;
        this.registry = registry;
        this.approvals = approvals;
        this.metrics = metrics;
    }

    /** @throws SchemaRegistryException when the record cannot be read for now: not skipped, to be read again */
    void route(ConsumerRecord<String, byte[]> record) {
        try {
            if (record.topic().equals(topics.toolResults())) {
                result(record);
            } else {
                control(record);
            }
        } catch (SchemaRegistryException registryDown) {
            throw registryDown;
        } catch (IOException | RuntimeException e) {
            metrics.increment(GatewayMetrics.Counter.BAD_INPUT_RECORDS);
            LOG.warn("skipped an unreadable record at {}-{}@{}: {}", record.topic(), record.partition(),
                    record.offset(), e.getMessage());
        }
    }

    private void result(ConsumerRecord<String, byte[]> record) throws IOException {
        ToolResult result = format.read(record.topic(), record.value(), ToolResult.class);
        String turnId = result.turnId() != null ? result.turnId() : record.key();
        if (turnId == null || result.callId() == null) {
            throw new IOException("a tool result needs a turn id (or key) and a call id");
        }
        if (registry.deliver(turnId, result)) {
            metrics.increment(GatewayMetrics.Counter.TOOL_RESULTS_RECEIVED);
        }
    }

    private void control(ConsumerRecord<String, byte[]> record) throws IOException {
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
            approvals.asked(turnId, command.callId(), command.toolName());
            registry.approvalRequested(turnId, command.callId());
        } else if (command.type() == ControlMessage.Type.APPROVAL && command.callId() != null
                && command.approved() != null) {
            approvals.decided(turnId, command.callId(), command.approved(), command.reason());
        }
    }
}
