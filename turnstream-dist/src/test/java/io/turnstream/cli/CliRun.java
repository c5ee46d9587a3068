package io.turnstream.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;

/** One {@code turnstream} command run in this JVM, as the CLI would run it: its exit code, stdout and stderr. */
public record CliRun(int exitCode, String out, String err) {

    /** {@code turnstream <args>}. */
    public static CliRun of(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.commandLine().setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true)).execute(args);
        return new CliRun(code, out.toString(), err.toString());
    }

    /** {@code turnstream <args>}: its stdout; fails the test with its stderr when it exits with anything but 0. */
    public static String succeeding(String... args) {
        CliRun run = of(args);
        assertThat(run.exitCode()).as("turnstream %s: %s", String.join(" ", args), run.err()).isZero();
        return run.out();
    }
}
