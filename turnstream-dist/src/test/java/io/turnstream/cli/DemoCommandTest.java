package io.turnstream.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.testsupport.UsesBroker;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code turnstream demo --exit}: the whole pipeline in one process, one scripted turn with tool use. */
@UsesBroker
class DemoCommandTest {

    @Test
    void demoExitPrintsACompleteTurnWithToolUseAndExitsZero() {
        assertCompleteTurnWithToolUse(demo());
    }

    /** Every service as its own least-privilege principal: a turn with tool calls still completes. */
    @Test
    void secureDemoCompletesATurnWithToolUseAsLeastPrivilegePrincipals() {
        String printed = demo("--secure");
        assertThat(printed).contains("SASL/SCRAM-SHA-256 and ACLs; credentials=");
        assertCompleteTurnWithToolUse(printed);
    }

    private static String demo(String... more) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<String> args = new ArrayList<>(List.of("demo", "--exit", "--port", "0", "--provider", "simulated", "--verbose"));
        args.addAll(List.of(more));
        // --verbose leaves the log levels of this test JVM alone
        int code = Main.commandLine().setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true))
                .execute(args.toArray(String[]::new));
        assertThat(code).as("exit code; stdout: %s; stderr: %s", out, err).isZero();
        return out.toString();
    }

    private static void assertCompleteTurnWithToolUse(String printed) {
        assertThat(printed)
                .contains("broker ready at", "topology running", "tool executor running", "gateway at http://")
                .containsPattern("seq +1 +turn_started")
                .containsPattern("tool_call +completed +v1 +list_files")
                .containsPattern("tool_call +completed +v1 +read_file \\{\"path\":\"README.md\"}")
                .containsPattern("tool_output +completed +v1 +ok \"# Rocket club flight log\"")
                .containsPattern("message \\(agent\\) +updated")
                .containsPattern("turn_completed +(model=\\S+ +)?status=complete")
                // a call that finishes before its tool_started notice is read goes from pending to completed
                .containsPattern("tool_status +running +(list_files|read_file)")
                .containsPattern("tool_status +completed +list_files")
                .containsPattern("turn_status +step_completed +step=1 +model=\\S+ +tokens=\\d+")
                .doesNotContain("(no payload)")
                .contains("Final answer:", "`README.md` has", "> # Rocket club flight log", "The turn completed.");
        assertThat(printed.indexOf("turn_started")).isLessThan(printed.indexOf("turn_completed"));
    }

    @Test
    void withApiKeysTheCurlExamplesSendTheKeyFromTheEnvironmentNeverTheKeyItself() {
        StringWriter keyed = new StringWriter();
        DemoCommand.printHowToGoOn("http://127.0.0.1:8080", "http://127.0.0.1:8081", true, new PrintWriter(keyed));
        StringWriter open = new StringWriter();
        DemoCommand.printHowToGoOn("http://127.0.0.1:8080", "http://127.0.0.1:8081", false, new PrintWriter(open));

        assertThat(keyed.toString())
                .contains("curl -s http://127.0.0.1:8080/v1/turns -H \"authorization: Bearer $TURNSTREAM_KEY\"")
                .contains("curl -N -H \"authorization: Bearer $TURNSTREAM_KEY\" http://127.0.0.1:8080/v1/turns/TURN_ID/events")
                .contains("curl -s -H \"authorization: Bearer $TURNSTREAM_KEY\" http://127.0.0.1:8080/v1/turns/TURN_ID")
                .contains("export TURNSTREAM_KEY=");
        assertThat(open.toString()).doesNotContain("authorization").contains("curl -N http://127.0.0.1:8080/v1/turns/TURN_ID/events");
    }
}
