package io.turnstream.demo;

import io.turnstream.gateway.Gateway;
import io.turnstream.gateway.GatewayConfig;
import io.turnstream.gateway.ProviderEndpoints;
import io.turnstream.gateway.security.SpendPolicy;
import io.turnstream.gateway.turn.TurnRequest;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.model.Topics;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.EmbeddedKafkaBroker;
import io.turnstream.runtime.ServiceMetrics;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.StreamsService;
import io.turnstream.runtime.TopicAdmin;
import io.turnstream.security.ServiceAcls;
import io.turnstream.tools.ToolExecutorConfig;
import io.turnstream.tools.ToolExecutorService;
import io.turnstream.tools.ToolRegistry;
import io.turnstream.topology.TopologyConfig;
import io.turnstream.topology.UpsertTopology;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.common.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The whole product in one process: an embedded single-node KRaft broker, the contract's topics, the
 * upsert topology, the tool executor on a sample workspace, the gateway (HTTP API, SSE, web view) and
 * a printer of {@code llm.upserts}. {@link #start} prints a progress line per step; {@link #close}
 * stops everything in reverse order and deletes the temporary directory.
 */
public final class Demo implements AutoCloseable {

    /** The scripted turn's prompt: the simulated agent lists the workspace, reads its README and answers. */
    public static final String SCRIPTED_PROMPT = "What is in this workspace?";

    private static final Logger LOG = LoggerFactory.getLogger(Demo.class);
    private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(90);
    /** Models for the scripted turn when a real provider's key is set and no --model is given. */
    private static final Map<String, String> DEFAULT_MODELS = Map.of(
            "anthropic", "claude-sonnet-4-5", "openai", "gpt-5-mini");

    /**
     * @param port the gateway's HTTP port, 0 for a free one
     * @param provider the provider of the scripted turn, null for the gateway's default
     * @param model the model, null for the provider's demo default
     */
    /**
     * @param secure Kafka with SASL/SCRAM and ACLs, each service as its own principal ({@code turnstream broker --secure})
     * @param settings {@code turnstream.*} settings for every service, e.g. a tool's approval policy or
     *                 the gateway's CORS origins
     */
    public record Options(int port, ProviderEndpoints endpoints, String provider, String model, boolean secure,
                          Map<String, String> settings) {
        public Options {
            settings = Map.copyOf(settings);
        }

        public Options(int port, ProviderEndpoints endpoints, String provider, String model, boolean secure) {
            this(port, endpoints, provider, model, secure, Map.of());
        }

        public Options(int port, ProviderEndpoints endpoints, String provider, String model) {
            this(port, endpoints, provider, model, false);
        }

        public Options withSettings(Map<String, String> more) {
            Map<String, String> all = new HashMap<>(settings);
            all.putAll(more);
            return new Options(port, endpoints, provider, model, secure, all);
        }
    }

    private final PrintWriter out;
    private final Deque<AutoCloseable> started = new ArrayDeque<>();
    private final Path home;
    private Path workspace;
    private UpsertPrinter printer;
    private Gateway gateway;
    private String bootstrapServers;
    private EmbeddedKafkaBroker broker;
    private String defaultProvider;
    private String defaultModel;

    private Demo(PrintWriter out, Path home) {
        this.out = out;
        this.home = home;
    }

    /** Starts every part, printing progress; on failure, stops what had started and throws. */
    public static Demo start(Options options, PrintWriter out) {
        Path home;
        try {
            home = Files.createTempDirectory("turnstream-demo");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the demo's temporary directory", e);
        }
        Demo demo = new Demo(out, home);
        try {
            demo.startAll(options);
            return demo;
        } catch (RuntimeException | IOException | ExecutionException e) {
            demo.close();
            throw new IllegalStateException(e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            demo.close();
            throw new IllegalStateException("interrupted while starting", e);
        }
    }

    private void startAll(Options options) throws IOException, ExecutionException, InterruptedException {
        long begin = System.nanoTime();
        step("starting the embedded Kafka broker (single-node KRaft)");
        Path kafkaDir = Files.createDirectories(home.resolve("kafka"));
        EmbeddedKafkaBroker broker = new EmbeddedKafkaBroker(0, kafkaDir);
        Properties ids = new Properties();
        ids.setProperty(TopologyConfig.APPLICATION_ID, "turnstream-demo-topology");
        ids.setProperty(ToolExecutorConfig.PREFIX + "group-id", "turnstream-demo-tools");
        if (options.secure()) {
            broker.secured(ServiceAcls.of(Settings.of(ids)).brokerSecurity(kafkaDir));
        }
        started.push(broker);
        broker.start();
        done("broker ready at " + broker.bootstrapServers() + (options.secure()
                ? " (SASL/SCRAM-SHA-256 and ACLs; credentials=" + broker.security().credentialsDir() + ")" : ""), begin);
        bootstrapServers = broker.bootstrapServers();
        this.broker = broker;

        // the demo's own parts (topics, the upsert printer) act as the admin
        Properties base = broker.adminProperties();
        base.putAll(ids);
        base.putAll(options.settings());
        if (options.model() != null && !base.containsKey(SpendPolicy.ALLOWED_MODELS)) {
            // the model the user named is one the operator configured: allowed even when the gateway has no price for it
            String provider = options.provider() != null ? options.provider() : options.endpoints().defaultProvider();
            base.setProperty(SpendPolicy.ALLOWED_MODELS, provider + ":" + options.model() + ","
                    + ProviderEndpoints.SIMULATED + ":*");
        }
        Settings settings = Settings.of(base);
        Topics topics = settings.topics();
        // one registry for the three services, served on the gateway's management port as /metrics/prometheus
        ServiceMetrics metrics = ServiceMetrics.create("demo", settings);
        started.push(metrics);
        step("creating the topics");
        TopicAdmin.createAll(settings.kafkaProperties(), topics, 1, (short) 1);
        done(String.join(", ", topics.byRole().values().stream().sorted().toList()), begin);

        step("starting the upsert topology (Kafka Streams, exactly-once)");
        Settings topologySettings = as(ServiceAcls.Service.TOPOLOGY, settings)
                .with(TopologyConfig.STATE_DIR, home.resolve("streams-state").toString())
                // a short commit interval: with exactly-once, upserts become visible at each commit
                .with("commit.interval.ms", "50");
        TopologyConfig topologyConfig = TopologyConfig.from(topologySettings);
        StreamsService topology = StreamsService.start(UpsertTopology.build(topologyConfig),
                topologyConfig.streamsProperties(), StreamsService.Options.from(topologySettings, -1), metrics);
        started.push(topology);
        awaitRunning(topology);
        done("topology running", begin);

        workspace = SampleWorkspace.create(home.resolve("workspace"));
        step("starting the tool executor in " + workspace);
        ToolExecutorService tools = new ToolExecutorService(as(ServiceAcls.Service.TOOL_EXECUTOR, settings)
                .with(ToolExecutorConfig.WORKSPACE, workspace.toString()), ToolRegistry.installed())
                .withMetrics(metrics);
        started.push(tools);
        tools.start();
        done("tool executor running", begin);

        printer = new UpsertPrinter(settings.kafkaProperties(), topics.upserts(), WireFormat.JSON, out);
        started.push(printer);

        step("starting the gateway");
        gateway = Gateway.start(as(ServiceAcls.Service.GATEWAY, settings)
                        .with(GatewayConfig.PREFIX + "port", String.valueOf(options.port())),
                options.endpoints(), List.of(), metrics);
        started.push(gateway);
        gateway.views().loaded().get();
        defaultProvider = options.provider() != null ? options.provider() : gateway.defaultProvider();
        defaultModel = options.model() != null ? options.model() : DEFAULT_MODELS.get(defaultProvider);
        done("gateway at " + gateway.baseUrl() + " (provider: " + defaultProvider
                + (defaultModel != null ? ", model " + defaultModel : "") + ")", begin);
    }

    /** The settings of a service: on a secured broker, with the credentials of the service's own principal. */
    private Settings as(ServiceAcls.Service service, Settings settings) {
        if (broker.security() == null) {
            return settings;
        }
        Properties credentials = broker.security().clientProperties(service.principalName());
        for (String key : credentials.stringPropertyNames()) {
            settings = settings.with(key, credentials.getProperty(key));
        }
        return settings;
    }

    /** Starts a turn with the demo's provider and model; its upserts are printed as they arrive. */
    public TurnStatus startTurn(String prompt) {
        return gateway.admission().startTurn(TurnRequest.prompt(defaultProvider, defaultModel, prompt));
    }

    /** Completes with the turn's {@code turn_completed} or {@code turn_error} from {@code llm.upserts}. */
    public CompletableFuture<UITurnEvent> finished(String turnId) {
        return printer.finished(turnId);
    }

    /** The last completed agent message of a turn, as printed. */
    public String finalAnswer(String turnId) {
        return printer.finalAnswer(turnId);
    }

    public String gatewayUrl() {
        return gateway.baseUrl();
    }

    /** Whether the gateway's API asks for an API key ({@code TURNSTREAM_API_KEYS} or a keys file is set). */
    public boolean requiresApiKey() {
        return gateway.requiresApiKey();
    }

    /** Where the gateway serves health and metrics, apart from its API. */
    public String managementUrl() {
        return "http://127.0.0.1:" + gateway.managementPort();
    }

    /** The embedded broker, for clients of the demo's topics. */
    public String bootstrapServers() {
        return bootstrapServers;
    }

    public Path workspace() {
        return workspace;
    }

    private void awaitRunning(StreamsService topology) throws InterruptedException {
        long deadline = System.nanoTime() + STARTUP_TIMEOUT.toNanos();
        while (!topology.isRunning()) {
            Throwable failed = topology.failure().getNow(null);
            if (failed != null) {
                throw new IllegalStateException("the topology failed to start: " + failed.getMessage(), failed);
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the topology did not start within " + STARTUP_TIMEOUT.toSeconds() + " s");
            }
            Thread.sleep(20);
        }
    }

    private void step(String what) {
        synchronized (out) {
            out.println("* " + what + " ...");
            out.flush();
        }
    }

    private void done(String what, long begin) {
        synchronized (out) {
            out.printf("  %s [%.1f s]%n", what, (System.nanoTime() - begin) / 1e9);
            out.flush();
        }
    }

    /** Stops the gateway, the tool executor, the topology and the broker, then deletes the demo's files. */
    @Override
    public void close() {
        while (!started.isEmpty()) {
            AutoCloseable part = started.pop();
            try {
                part.close();
            } catch (Exception e) {
                LOG.warn("{} did not stop cleanly: {}", part.getClass().getSimpleName(), e.getMessage());
            }
        }
        try {
            Utils.delete(home.toFile());
        } catch (IOException e) {
            LOG.warn("cannot delete {}: {}", home, e.getMessage());
        }
    }
}
