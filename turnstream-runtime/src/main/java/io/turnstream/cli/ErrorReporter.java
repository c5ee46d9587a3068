package io.turnstream.cli;

import io.turnstream.runtime.Failures;
import picocli.CommandLine;
import picocli.CommandLine.IExecutionExceptionHandler;
import picocli.CommandLine.ParseResult;

/**
 * How every subcommand reports a failure: one line {@code turnstream <command>: error: <what>} on
 * stderr and a distinct exit code. A {@link CliFailure} is expected and needs no stack trace; any
 * other exception is unforeseen, and its stack trace is printed when {@code TURNSTREAM_DEBUG} is set.
 */
public final class ErrorReporter implements IExecutionExceptionHandler {

    public static final String DEBUG_ENV = "TURNSTREAM_DEBUG";

    @Override
    public int handleExecutionException(Exception failure, CommandLine command, ParseResult parseResult) {
        boolean debug = System.getenv(DEBUG_ENV) != null;
        boolean expected = failure instanceof CliFailure;
        String what = expected ? failure.getMessage()
                : Failures.describe(failure) + (debug ? "" : " (set " + DEBUG_ENV + "=1 for the stack trace)");
        command.getErr().println(command.getCommandSpec().qualifiedName() + ": error: " + what);
        Throwable trace = expected ? failure.getCause() : failure;
        if (debug && trace != null) {
            trace.printStackTrace(command.getErr());
        }
        command.getErr().flush();
        return expected ? ((CliFailure) failure).exitCode() : ExitCodes.FAILURE;
    }
}
