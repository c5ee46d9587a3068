package io.turnstream.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The bench's options fail before any broker starts when they cannot be right. */
class BenchCommandTest {

    @Test
    void anUnknownPhaseNoPairsOrABaseThatIsNoResultsJsonIsAConfigError(@TempDir Path dir) throws IOException {
        String out = dir.resolve("out").toString();

        String[] unknown = run("bench", "--only", "flood,latency", "--output", out);
        assertThat(unknown[0]).isEqualTo(Integer.toString(ExitCodes.CONFIG));
        assertThat(unknown[1]).contains("unknown phase 'latency', expected one of flood, ladder, appends, amplification");

        assertThat(run("bench", "--pairs", "0", "--output", out)[1]).contains("pairs must be at least 1, got 0");

        assertThat(run("bench", "--compare", dir.resolve("absent.json").toString(), "--output", out)[1])
                .contains("absent.json does not exist");

        Path old = Files.writeString(dir.resolve("old.json"), "{\"ratios\": {}}");
        String[] noFigures = run("bench", "--compare", old.toString(), "--output", out);
        assertThat(noFigures[0]).isEqualTo(Integer.toString(ExitCodes.CONFIG));
        assertThat(noFigures[1]).contains("has no \"figures\"");
        assertThat(dir.resolve("out")).doesNotExist();
    }

    @Test
    void turnsGoWithAClusterRunAndAreAtLeastOne(@TempDir Path dir) {
        String out = dir.resolve("out").toString();

        String[] none = run("bench", "--cluster", "3", "--turns", "0", "--output", out);
        assertThat(none[0]).isEqualTo(Integer.toString(ExitCodes.CONFIG));
        assertThat(none[1]).contains("turns must be at least 1, got 0");

        String[] withoutCluster = run("bench", "--turns", "50", "--output", out);
        assertThat(withoutCluster[0]).isEqualTo(Integer.toString(ExitCodes.USAGE));
        assertThat(withoutCluster[1]).contains("--turns goes with --cluster");
        assertThat(dir.resolve("out")).doesNotExist();
    }

    /** Exit code and standard error. */
    private static String[] run(String... args) {
        StringWriter err = new StringWriter();
        int code = Main.commandLine().setOut(new PrintWriter(new StringWriter(), true)).setErr(new PrintWriter(err, true))
                .execute(args);
        return new String[] {Integer.toString(code), err.toString()};
    }
}
