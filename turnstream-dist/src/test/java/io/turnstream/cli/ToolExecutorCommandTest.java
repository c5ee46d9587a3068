package io.turnstream.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class ToolExecutorCommandTest {

    @Test
    void aMissingWorkspaceIsAClearErrorNotAStackTrace() {
        Run run = run("--bootstrap-servers", "127.0.0.1:9", "--workspace", "/no/such/workspace");

        assertThat(run.exitCode).isEqualTo(ExitCodes.CONFIG);
        assertThat(run.err).isEqualTo("turnstream tool-executor: error: workspace /no/such/workspace is not an existing directory\n");
    }

    @Test
    void theWorkspaceFlagIsRequired() {
        Run run = run("--bootstrap-servers", "127.0.0.1:9");

        assertThat(run.exitCode).isEqualTo(2);
        assertThat(run.err).contains("Missing required option: '--workspace=<workspace>'");
    }

    private record Run(int exitCode, String err) {
    }

    private static Run run(String... args) {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream original = System.err;
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            CommandLine command = Main.commandLine();
            command.setErr(new java.io.PrintWriter(System.err, true));
            String[] withCommand = new String[args.length + 1];
            withCommand[0] = "tool-executor";
            System.arraycopy(args, 0, withCommand, 1, args.length);
            int exitCode = command.execute(withCommand);
            return new Run(exitCode, err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setErr(original);
        }
    }
}
