package io.turnstream.cli;

import io.turnstream.gateway.Gateway;
import io.turnstream.gateway.GatewayConfig;
import io.turnstream.runtime.Settings;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code turnstream gateway}: the LLM gateway's HTTP API and agent loops, until stopped. */
@Command(name = "gateway", mixinStandardHelpOptions = true,
        description = {"Runs the LLM gateway: POST /v1/turns starts a turn whose events go to llm.raw-events.",
                "Provider keys come from ANTHROPIC_API_KEY / OPENAI_API_KEY (base URLs from ANTHROPIC_BASE_URL / "
                        + "OPENAI_BASE_URL); without a key the built-in simulated provider answers."})
public final class GatewayCommand implements Callable<Integer> {

    @Option(names = "--bootstrap-servers", defaultValue = "${env:" + Settings.BOOTSTRAP_ENV + "}",
            description = "Kafka bootstrap servers (default: $" + Settings.BOOTSTRAP_ENV + ")")
    String bootstrapServers;

    @Option(names = "--port", description = "HTTP port (default: turnstream.gateway.port, else "
            + GatewayConfig.DEFAULT_PORT + "; 0 for a free one)")
    Integer port;

    @Option(names = "--host", description = "Address to listen on (default: turnstream.gateway.host, else 127.0.0.1; "
            + "0.0.0.0 for every interface, as in a container)")
    String host;

    @Option(names = "--config", paramLabel = "FILE",
            description = "Properties file: turnstream.gateway.* settings and Kafka client properties")
    Path config;

    @Override
    public Integer call() throws Exception {
        Settings settings = Settings.load(config, bootstrapServers);
        if (settings.bootstrapServers() == null || settings.bootstrapServers().isBlank()) {
            System.err.println("gateway: no Kafka to talk to: give --bootstrap-servers, set "
                    + Settings.BOOTSTRAP_ENV + ", or put bootstrap.servers in --config");
            return 2;
        }
        if (port != null) {
            settings = settings.with(GatewayConfig.PREFIX + "port", String.valueOf(port));
        }
        if (host != null) {
            settings = settings.with(GatewayConfig.PREFIX + "host", host);
        }
        Gateway gateway;
        try {
            gateway = Gateway.start(settings);
        } catch (RuntimeException e) {
            System.err.println("gateway: cannot start: " + e.getMessage());
            return 1;
        }
        System.out.println("gateway listening on " + gateway.baseUrl());
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            gateway.close();
            stopped.countDown();
        }, "gateway-shutdown"));
        stopped.await();
        return 0;
    }
}
