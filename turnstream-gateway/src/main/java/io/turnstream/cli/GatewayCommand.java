package io.turnstream.cli;

import io.turnstream.gateway.Gateway;
import io.turnstream.gateway.GatewayConfig;
import io.turnstream.gateway.security.ApiKeys;
import io.turnstream.gateway.security.SecurityConfig;
import io.turnstream.model.Topics;
import io.turnstream.runtime.Failures;
import io.turnstream.runtime.Settings;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code turnstream gateway}: the LLM gateway's HTTP API and agent loops, until stopped. */
@Command(name = "gateway", mixinStandardHelpOptions = true, versionProvider = TurnstreamVersion.class,
        description = {"Runs the LLM gateway: POST /v1/turns puts a turn on llm.turn-requests; the gateways of one "
                + "group share the turns and take over those of a gateway that stops or dies.",
                "Provider keys come from ANTHROPIC_API_KEY / OPENAI_API_KEY (base URLs from ANTHROPIC_BASE_URL / "
                        + "OPENAI_BASE_URL); without a key the built-in simulated provider answers.",
                "API keys (tenant:key entries) come from --api-keys-file or " + ApiKeys.ENV
                        + "; with keys, every route but /health needs Authorization: Bearer <key>."})
public final class GatewayCommand implements Callable<Integer> {

    /** The service's own jar, {@code turnstream-gateway.jar}: this command alone, with the flags of {@code turnstream gateway}. */
    public static void main(String[] args) {
        Launcher.main(new GatewayCommand(), "turnstream-gateway", args);
    }

    @Mixin
    private KafkaOptions kafka;

    @Option(names = "--port", description = "HTTP port (default: turnstream.gateway.port, else "
            + GatewayConfig.DEFAULT_PORT + "; 0 for a free one)")
    private Integer port;

    @Option(names = "--host", description = "Address to listen on (default: turnstream.gateway.host, else 127.0.0.1; "
            + "0.0.0.0 for every interface, as in a container)")
    private String host;

    @Option(names = "--management-port", paramLabel = "P", defaultValue = "" + GatewayConfig.DEFAULT_MANAGEMENT_PORT,
            description = "Port of /health (200 when the gateway's Kafka readers and producer are up, else 503), "
                    + "/health/live and /metrics, apart from the public API (default: ${DEFAULT-VALUE}; 0 for a free one)")
    private int managementPort;

    @Option(names = "--management-host", paramLabel = "ADDRESS",
            description = "Address of the management port (default: turnstream.gateway.management.host, else 127.0.0.1, "
                    + "whatever --host is; 0.0.0.0 in a container that publishes the port on the host's loopback)")
    private String managementHost;

    @Option(names = "--api-keys-file", paramLabel = "FILE", description = "tenant:key entries, one per line "
            + "(default: turnstream.gateway.api-keys-file; also read from " + ApiKeys.ENV + ")")
    private Path apiKeysFile;

    @Option(names = "--insecure", description = "Serve without API keys on a non-loopback address (anyone who "
            + "reaches it can start turns and run tools)")
    private boolean insecure;

    @Override
    public Integer call() {
        Settings settings = kafka.settings();
        if (port != null) {
            settings = settings.with(GatewayConfig.PREFIX + "port", String.valueOf(port));
        }
        if (host != null) {
            settings = settings.with(GatewayConfig.PREFIX + "host", host);
        }
        settings = settings.with(GatewayConfig.MANAGEMENT_PORT, String.valueOf(managementPort));
        if (managementHost != null) {
            settings = settings.with(GatewayConfig.MANAGEMENT_HOST, managementHost);
        }
        if (apiKeysFile != null) {
            settings = settings.with(SecurityConfig.API_KEYS_FILE, apiKeysFile.toAbsolutePath().toString());
        }
        if (insecure) {
            settings = settings.with(SecurityConfig.INSECURE, "true");
        }
        try {
            GatewayConfig config = GatewayConfig.from(settings);
            config.security().requireSafeToListenOn(config.host());
        } catch (IllegalArgumentException e) {
            throw new CliFailure(ExitCodes.CONFIG, e.getMessage(), e);
        }
        Topics topics = settings.topics();
        settings = ClusterCheck.require(settings, List.of(topics.rawEvents(), topics.toolResults(), topics.control(),
                topics.upserts(), topics.itemState(), topics.toolDefinitions(), topics.turnRequests(),
                topics.threadAllowances()));
        Gateway gateway;
        try {
            gateway = Gateway.start(settings);
        } catch (RuntimeException e) {
            throw new CliFailure(ExitCodes.FAILURE, "cannot start: " + Failures.describe(e), e);
        }
        System.out.println("gateway listening on " + gateway.baseUrl() + "; health and metrics on port "
                + gateway.managementPort());
        // The gateway has no failure of its own that ends it: it runs until stopped.
        UntilStopped.run("gateway", gateway, new CompletableFuture<>());
        return ExitCodes.OK;
    }
}
