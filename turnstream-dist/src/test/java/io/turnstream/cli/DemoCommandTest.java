package io.turnstream.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

/** {@code turnstream demo --exit}: the whole pipeline in one process, one scripted turn with tool use. */
class DemoCommandTest {

    @Test
    void demoExitPrintsACompleteTurnWithToolUseAndExitsZero() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();

        // --verbose leaves the log levels of this test JVM alone
        int code = Main.commandLine().setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true))
                .execute("demo", "--exit", "--port", "0", "--provider", "simulated", "--verbose");

        String printed = out.toString();
        assertThat(code).as("exit code; stderr: %s", err).isZero();
        assertThat(printed)
                .contains("broker ready at", "topology running", "tool executor running", "gateway at http://")
                .containsPattern("seq +1 +turn_started")
                .containsPattern("tool_call +completed +v1 +list_files")
                .containsPattern("tool_call +completed +v1 +read_file \\{\"path\":\"README.md\"}")
                .containsPattern("tool_output +completed +v1 +ok \"# Rocket club flight log\"")
                .containsPattern("message \\(agent\\) +updated")
                .containsPattern("turn_completed +(model=\\S+ +)?status=complete")
                .contains("Final answer:", "`README.md` has", "> # Rocket club flight log", "The turn completed.");
        assertThat(printed.indexOf("turn_started")).isLessThan(printed.indexOf("turn_completed"));
    }
}
