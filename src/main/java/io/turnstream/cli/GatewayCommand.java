package io.turnstream.cli;

import io.turnstream.gateway.Gateway;
import io.turnstream.gateway.GatewayConfig;
import io.turnstream.model.Topics;
import io.turnstream.runtime.Failures;
import io.turnstream.runtime.Settings;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code turnstream gateway}: the LLM gateway's HTTP API and agent loops, until stopped. */
@Command(name = "gateway", mixinStandardHelpOptions = true,
        description = {"Runs the LLM gateway: POST /v1/turns puts a turn on llm.turn-requests; the gateways of one "
                + "group share the turns and take over those of a gateway that stops or dies.",
                "Provider keys come from ANTHROPIC_API_KEY / OPENAI_API_KEY (base URLs from ANTHROPIC_BASE_URL / "
                        + "OPENAI_BASE_URL); without a key the built-in simulated provider answers."})
public final class GatewayCommand implements Callable<Integer> {

    @Mixin
    private KafkaOptions kafka;

    @Option(names = "--port", description = "HTTP port (default: turnstream.gateway.port, else "
            + GatewayConfig.DEFAULT_PORT + "; 0 for a free one)")
    private Integer port;

    @Option(names = "--host", description = "Address to listen on (default: turnstream.gateway.host, else 127.0.0.1; "
            + "0.0.0.0 for every interface, as in a container)")
    private String host;

    @Override
    public Integer call() {
        Settings settings = kafka.settings();
        if (port != null) {
            settings = settings.with(GatewayConfig.PREFIX + "port", String.valueOf(port));
        }
        if (host != null) {
            settings = settings.with(GatewayConfig.PREFIX + "host", host);
        }
        Topics topics = settings.topics();
        ClusterCheck.require(settings, List.of(topics.rawEvents(), topics.toolResults(), topics.control(),
                topics.upserts(), topics.itemState(), topics.toolDefinitions(), topics.turnRequests()));
        Gateway gateway;
        try {
            gateway = Gateway.start(settings);
        } catch (RuntimeException e) {
            throw new CliFailure(ExitCodes.FAILURE, "cannot start: " + Failures.describe(e), e);
        }
        System.out.println("gateway listening on " + gateway.baseUrl());
        // The gateway has no failure of its own that ends it: it runs until stopped.
        UntilStopped.run("gateway", gateway, new CompletableFuture<>());
        return ExitCodes.OK;
    }
}
