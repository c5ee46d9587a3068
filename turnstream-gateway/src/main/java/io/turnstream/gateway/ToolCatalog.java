package io.turnstream.gateway;

import io.turnstream.gateway.provider.ToolDefinition;
import io.turnstream.model.PublishedTool;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.TopicReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListMap;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tools a model is offered when a turn names none: what the tool executors published on the
 * compacted {@code llm.tool-definitions}, read whole from the beginning without a consumer group and
 * then followed, so a tool deployed with the executor only (a plugin) is offered, and a withdrawn one
 * (tombstone) no longer is. Sorted by name.
 */
final class ToolCatalog implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ToolCatalog.class);

    private final String topic;
    private final WireFormat wire;
    private final Map<String, ToolDefinition> tools = new ConcurrentSkipListMap<>();
    private final TopicReader reader;

    ToolCatalog(Properties kafkaProperties, String topic, WireFormat wire) {
        this.topic = topic;
        this.wire = wire;
        this.reader = new TopicReader("turnstream-gateway-tools", kafkaProperties, List.of(topic),
                TopicReader.Start.BEGINNING, this::apply);
    }

    /** Completes once what was published when the gateway started has been read. */
    CompletableFuture<Void> loaded() {
        return reader.caughtUp();
    }

    /** The tools to offer a turn whose request names none. */
    List<ToolDefinition> offered() {
        List<ToolDefinition> offered = List.copyOf(tools.values());
        if (offered.isEmpty()) {
            LOG.warn("no tool executor has published its tools on {}: the model is offered no tools", topic);
        }
        return offered;
    }

    private void apply(ConsumerRecord<String, byte[]> record) {
        if (record.value() == null) {
            tools.remove(record.key());
            return;
        }
        PublishedTool tool;
        try {
            tool = wire.read(topic, record.value(), PublishedTool.class);
        } catch (IOException e) {
            throw new UncheckedIOException("not a PublishedTool: " + e.getMessage(), e);
        }
        tools.put(record.key(), new ToolDefinition(tool.name(), tool.description(), tool.inputSchema()));
    }

    boolean healthy() {
        return reader.healthy();
    }

    @Override
    public void close() {
        reader.close();
    }
}
