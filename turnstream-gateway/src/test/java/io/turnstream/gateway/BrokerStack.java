package io.turnstream.gateway;

import io.turnstream.gateway.sim.SimulatedAnthropicServer;
import io.turnstream.model.Topics;
import io.turnstream.runtime.EmbeddedKafkaBroker;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.StreamsService;
import io.turnstream.runtime.TopicAdmin;
import io.turnstream.runtime.TopologyInstance;
import io.turnstream.runtime.UpsertLog;
import io.turnstream.tools.ToolExecutorConfig;
import io.turnstream.tools.ToolExecutorService;
import io.turnstream.tools.ToolRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * An embedded broker with the contract's topics and what a test class runs on it (the real topology, a tool
 * executor, the simulated provider, gateways, readers of the upserts), each closed after the class's tests in
 * the reverse order of its start. Register it with {@code @RegisterExtension static final BrokerStack stack}
 * and start the parts in {@code @BeforeAll}; the class's own {@code @AfterAll} runs before they close.
 */
public final class BrokerStack implements AfterAllCallback {

    private final Deque<AutoCloseable> started = new ArrayDeque<>();
    private EmbeddedKafkaBroker broker;

    /** Starts the broker and creates the contract's topics with {@code partitions} partitions each. */
    public BrokerStack broker(int partitions) throws Exception {
        broker = closing(EmbeddedKafkaBroker.onFreePort().start());
        createTopics(Topics.DEFAULTS, partitions);
        return this;
    }

    public String bootstrapServers() {
        return broker.bootstrapServers();
    }

    /** Topics under other names, such as a second gateway's own turn requests. */
    public void createTopics(Topics topics, int partitions) throws Exception {
        Properties admin = new Properties();
        admin.put("bootstrap.servers", broker.bootstrapServers());
        TopicAdmin.createAll(admin, topics, partitions, (short) 1);
    }

    /** The real topology, its state in {@code stateDir}. */
    public StreamsService topology(String applicationId, Path stateDir) {
        return closing(TopologyInstance.start(TopologyInstance.settings(broker.bootstrapServers(), applicationId,
                stateDir, Map.of())));
    }

    /**
     * A tool executor running {@code tools} in {@code workspace}, which it creates with a {@code README.md}.
     *
     * @param settings executor settings over the broker's address and the workspace
     */
    public ToolExecutorService executor(Path workspace, ToolRegistry tools, Map<String, String> settings)
            throws Exception {
        Files.createDirectories(workspace);
        Files.writeString(workspace.resolve("README.md"), "# Demo workspace\n");
        Properties props = new Properties();
        props.put("bootstrap.servers", broker.bootstrapServers());
        props.put(ToolExecutorConfig.WORKSPACE, workspace.toString());
        props.putAll(settings);
        return closing(new ToolExecutorService(Settings.of(props), tools).start());
    }

    /** A gateway's settings that reach the broker and listen on a free port; a test adds its own. */
    public Properties gatewaySettings() {
        Properties settings = new Properties();
        settings.put("bootstrap.servers", broker.bootstrapServers());
        settings.put("turnstream.gateway.port", "0");
        return settings;
    }

    /** A gateway whose only provider is {@code provider}. */
    public Gateway gateway(Properties settings, SimulatedAnthropicServer provider) {
        return closing(Gateway.start(Settings.of(settings), ProviderEndpoints.simulatedOnly(provider.baseUrl()),
                List.of()));
    }

    /** A reader of everything the topology writes to {@code llm.upserts}. */
    public UpsertLog upserts() {
        return closing(new UpsertLog(broker.bootstrapServers()));
    }

    /** Anything else the class starts (the simulated provider, a tap), closed with the rest. */
    public <T extends AutoCloseable> T closing(T resource) {
        started.push(resource);
        return resource;
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        Exception failed = null;
        while (!started.isEmpty()) {
            try {
                started.pop().close();
            } catch (Exception e) {
                if (failed == null) {
                    failed = e;
                } else {
                    failed.addSuppressed(e);
                }
            }
        }
        broker = null;
        if (failed != null) {
            throw failed;
        }
    }
}
