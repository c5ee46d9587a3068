package io.turnstream.tools;

import io.turnstream.model.Topics;
import io.turnstream.model.WireFormat;
import java.time.Clock;
import java.util.Properties;

/** Publishes a registry's tools on {@code llm.tool-definitions} as a starting executor does, for gateway tests with a stub executor. */
public final class PublishedTools {

    private PublishedTools() {
    }

    public static void publish(String bootstrapServers, Topics topics, ToolRegistry registry) {
        Properties props = new Properties();
        props.setProperty("bootstrap.servers", bootstrapServers);
        ToolDefinitionPublisher.publish(props, topics, WireFormat.JSON, registry, "test-stub-executor", Clock.systemUTC());
    }
}
