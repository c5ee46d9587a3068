package io.turnstream.cli;

import org.apache.kafka.common.utils.AppInfoParser;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code turnstream}: the one entry point; each service is a subcommand. */
@Command(name = "turnstream", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "Carries LLM responses from providers to user interfaces through Kafka.",
        subcommands = {DemoCommand.class, BrokerCommand.class, TopicsCommand.class, TopologyCommand.class, GatewayCommand.class,
            ToolExecutorCommand.class, ConnectCommand.class, BenchCommand.class, CommandLine.HelpCommand.class},
        footer = {"", "Exit codes: 0 ok, 1 failed while running, 2 usage error,",
            "  3 Kafka unreachable or topics missing, 4 bad configuration file.",
            "Environment: TURNSTREAM_BOOTSTRAP_SERVERS (default broker list),",
            "  TURNSTREAM_LOG_FORMAT=json (JSON log lines), TURNSTREAM_DEBUG=1 (stack traces),",
            "  JAVA_OPTS (JVM flags, read by the ./turnstream launcher)."})
public final class Main implements Runnable {

    @Spec
    private CommandSpec spec;

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** The command line with the shared error handling; tests run it in-process. */
    public static CommandLine commandLine() {
        return new CommandLine(new Main())
                .setExecutionExceptionHandler(new ErrorReporter());
    }

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "a subcommand is required");
    }

    /** The version from the jar manifest, and the Kafka client version it runs with. */
    static final class Version implements IVersionProvider {
        @Override
        public String[] getVersion() {
            String own = Main.class.getPackage().getImplementationVersion();
            return new String[] {"turnstream " + (own != null ? own : "(development build)")
                    + " (Kafka " + AppInfoParser.getVersion() + ")"};
        }
    }
}
