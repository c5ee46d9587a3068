package io.turnstream.cli;

import io.turnstream.runtime.Settings;
import picocli.CommandLine;

/**
 * Runs a command line the way every Turnstream entry point does, the {@code turnstream} CLI of the
 * dist as each service's own jar ({@code turnstream-gateway.jar}, ...): one error line and a distinct
 * exit code per failure ({@link ErrorReporter}), and the exit codes and environment in the help.
 */
public final class Launcher {

    private static final String[] FOOTER = {"", "Exit codes: 0 ok, 1 failed while running, 2 usage error,",
        "  3 Kafka unreachable or topics missing, 4 bad configuration file.",
        "Environment: " + Settings.BOOTSTRAP_ENV + " (default broker list),",
        "  TURNSTREAM_LOG_FORMAT=json (JSON log lines),",
        "  " + ErrorReporter.DEBUG_ENV + "=1 (stack traces),",
        "  JAVA_OPTS (JVM flags, read by ./turnstream and the Docker image)."};

    private Launcher() {
    }

    /**
     * @param command a picocli command object
     * @param name the program name in usage and error lines ({@code turnstream}, {@code turnstream-gateway})
     */
    public static CommandLine commandLine(Object command, String name) {
        CommandLine line = new CommandLine(command)
                .setCommandName(name)
                .setExecutionExceptionHandler(new ErrorReporter());
        line.getCommandSpec().usageMessage().footer(FOOTER);
        return line;
    }

    /** Runs {@code command} with {@code args} and exits the JVM with its exit code: the body of a {@code main}. */
    public static void main(Object command, String name, String[] args) {
        System.exit(commandLine(command, name).execute(args));
    }
}
