package io.turnstream.cli;

import io.turnstream.model.Topics;
import io.turnstream.runtime.Failures;
import io.turnstream.runtime.HealthServer;
import io.turnstream.runtime.Settings;
import io.turnstream.tools.ToolExecutorConfig;
import io.turnstream.tools.ToolExecutorService;
import io.turnstream.tools.ToolRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code turnstream tool-executor}: runs tool calls from {@code llm.tool-calls} until stopped (Ctrl-C or SIGTERM). */
@Command(name = "tool-executor", mixinStandardHelpOptions = true, versionProvider = TurnstreamVersion.class,
        description = "Run the tool calls on llm.tool-calls inside a workspace directory and publish one result per call to llm.tool-results.")
public final class ToolExecutorCommand implements Callable<Integer> {

    /** The service's own jar, {@code turnstream-tool-executor.jar}: this command alone, with the flags of {@code turnstream tool-executor}. */
    public static void main(String[] args) {
        Launcher.main(new ToolExecutorCommand(), "turnstream-tool-executor", args);
    }

    @Mixin
    private KafkaOptions kafka;

    @Mixin
    private HealthHostOption healthHost;

    @Option(names = "--workspace", required = true, description = "The directory tools may read and write; nothing outside it is touched")
    private Path workspace;

    @Option(names = "--health-port", paramLabel = "P", defaultValue = "8082",
            description = "HTTP port of /health, /health/live and /metrics/prometheus "
                    + "(default: ${DEFAULT-VALUE}; 0 picks a free port, -1 turns it off).")
    private int healthPort;

    @Override
    public Integer call() {
        if (!Files.isDirectory(workspace)) {
            throw new CliFailure(ExitCodes.CONFIG, "workspace " + workspace + " is not an existing directory");
        }
        Settings settings = healthHost.applyTo(kafka.settings()).with(ToolExecutorConfig.WORKSPACE, workspace.toAbsolutePath().toString());
        Topics topics = settings.topics();
        settings = ClusterCheck.require(settings, List.of(topics.toolCalls(), topics.toolResults(), topics.control(),
                topics.toolDefinitions()));
        ToolExecutorService service;
        try {
            service = new ToolExecutorService(settings, ToolRegistry.installed());
        } catch (IllegalArgumentException e) {
            throw new CliFailure(ExitCodes.CONFIG, e.getMessage(), e);
        }
        try {
            service.start();
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw new CliFailure(ExitCodes.FAILURE, "cannot start: " + Failures.describe(e), e);
        }
        CompletableFuture<Throwable> failure = service.stopped().handle((done, error) ->
                error instanceof CompletionException wrapped ? wrapped.getCause() : error != null ? error
                        : new IllegalStateException("the executor stopped"));
        HealthServer health;
        try {
            health = healthPort < 0 ? null : HealthServer.start(HealthServer.host(settings), healthPort, () -> running(service),
                    service.serviceMetrics());
        } catch (IllegalStateException e) {
            service.close();
            throw new CliFailure(ExitCodes.FAILURE, Failures.describe(e), e);
        }
        UntilStopped.run("tool-executor", () -> {
            service.close();
            if (health != null) {
                health.close();
            }
        }, failure);
        return ExitCodes.OK;
    }

    /**
     * Live while it runs; not ready while it waits for the schema registry to read the tool calls or to publish results,
     * each named with the registry's failure.
     */
    private static HealthServer.Status running(ToolExecutorService service) {
        boolean up = !service.stopped().isDone();
        Map<String, Object> waits = new TreeMap<>();
        service.waitingFor().forEach((holding, registry) ->
                waits.put(holding, "waiting for the schema registry: " + registry.getMessage()));
        return new HealthServer.Status(up && waits.isEmpty(), up, waits);
    }
}
