package io.turnstream.gateway.ownership;

import io.turnstream.gateway.loop.ApprovalDecisions;
import io.turnstream.gateway.loop.GatewayMetrics;
import io.turnstream.gateway.loop.TurnRegistry;
import io.turnstream.model.Topics;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.ServiceMetrics;
import io.turnstream.runtime.TopicReader;
import java.util.List;
import java.util.Properties;

/**
 * What Kafka tells the gateway's running turns: tool results ({@code llm.tool-results}), cancel
 * commands, the tool executor's start markers and approval asks and decisions ({@code llm.control}). Every gateway instance must see the results of its own turns,
 * wherever their partition is, so this consumer is assigned every partition of both topics (no
 * consumer group) and starts at their end: a gateway only waits for results of calls its running
 * turns made. New partitions are picked up periodically. Where each record goes is
 * {@link InboxRouting}'s.
 */
public final class TurnInbox implements AutoCloseable {

    private final TopicReader reader;

    public TurnInbox(Properties kafkaProperties, Topics topics, WireFormat format, TurnRegistry registry,
              ApprovalDecisions approvals, GatewayMetrics metrics) {
        InboxRouting routing = new InboxRouting(topics, format, registry, approvals, metrics);
        this.reader = new TopicReader("turnstream-gateway-inbox", kafkaProperties,
                List.of(topics.toolResults(), topics.control()), TopicReader.Start.END, routing::route);
    }

    /** Exports the reader's consumer metrics. */
    public void bindTo(ServiceMetrics serviceMetrics) {
        reader.bindTo(serviceMetrics);
    }

    public boolean healthy() {
        return reader.healthy();
    }

    @Override
    public void close() {
        reader.close();
    }
}
