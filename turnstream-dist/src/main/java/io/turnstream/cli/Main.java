package io.turnstream.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code turnstream}: the one entry point of the dev distribution; each service is a subcommand, the
 * same command class its own jar runs ({@code turnstream-gateway.jar}, ...).
 */
@Command(name = "turnstream", mixinStandardHelpOptions = true, versionProvider = TurnstreamVersion.class,
        description = "Carries LLM responses from providers to user interfaces through Kafka.",
        subcommands = {DemoCommand.class, BrokerCommand.class, ClusterCommand.class, TopicsCommand.class, AclsCommand.class, TopologyCommand.class, GatewayCommand.class,
            ToolExecutorCommand.class, ConnectCommand.class, BenchCommand.class, CommandLine.HelpCommand.class})
public final class Main implements Runnable {

    @Spec
    private CommandSpec spec;

    public static void main(String[] args) {
        Launcher.main(new Main(), "turnstream", args);
    }

    /** The command line with the shared error handling; tests run it in-process. */
    public static CommandLine commandLine() {
        return Launcher.commandLine(new Main(), "turnstream");
    }

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "a subcommand is required");
    }
}
