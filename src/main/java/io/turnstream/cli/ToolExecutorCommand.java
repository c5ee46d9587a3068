package io.turnstream.cli;

import io.turnstream.runtime.Settings;
import io.turnstream.tools.ToolExecutorConfig;
import io.turnstream.tools.ToolExecutorService;
import io.turnstream.tools.ToolRegistry;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code turnstream tool-executor}: runs tool calls from {@code llm.tool-calls} until stopped (Ctrl-C or SIGTERM). */
@Command(name = "tool-executor", mixinStandardHelpOptions = true,
        description = "Run the tool calls on llm.tool-calls inside a workspace directory and publish one result per call to llm.tool-results.")
public final class ToolExecutorCommand implements Callable<Integer> {

    @Option(names = "--bootstrap-servers", defaultValue = "${env:" + Settings.BOOTSTRAP_ENV + "}",
            description = "Kafka bootstrap servers (default: $" + Settings.BOOTSTRAP_ENV + ")")
    String bootstrapServers;

    @Option(names = "--workspace", required = true, description = "The directory tools may read and write; nothing outside it is touched")
    Path workspace;

    @Option(names = "--config", description = "Properties file: turnstream.tool-executor.* settings and Kafka client settings")
    Path config;

    @Override
    public Integer call() throws Exception {
        Settings settings = Settings.load(config, bootstrapServers)
                .with(ToolExecutorConfig.WORKSPACE, workspace.toAbsolutePath().toString());
        ToolExecutorService service;
        try {
            service = new ToolExecutorService(settings, ToolRegistry.installed()).start();
        } catch (IllegalArgumentException | IllegalStateException e) {
            System.err.println("tool-executor: " + e.getMessage());
            return 1;
        }
        Thread shutdown = new Thread(service::close, "turnstream-tool-executor-shutdown");
        Runtime.getRuntime().addShutdownHook(shutdown);
        try {
            service.stopped().join();
            return 0;
        } catch (CompletionException failed) {
            System.err.println("tool-executor stopped: " + failed.getCause().getMessage());
            return 1;
        }
    }
}
