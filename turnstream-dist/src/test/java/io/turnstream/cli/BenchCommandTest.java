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
    void aNegativeSettleWaitOrAnIdleShareOutsideOneToAHundredIsAConfigErrorAndNeitherGoesWithACluster(@TempDir Path dir) {
        String out = dir.resolve("out").toString();

        String[] negative = run("bench", "--settle-wait", "-1", "--output", out);
        assertThat(negative[0]).isEqualTo(Integer.toString(ExitCodes.CONFIG));
        assertThat(negative[1]).contains("settle waits cannot be negative");

        String[] none = run("bench", "--settle-idle", "0", "--output", out);
        assertThat(none[0]).isEqualTo(Integer.toString(ExitCodes.CONFIG));
        assertThat(none[1]).contains("the settle idle share must be over 0% and at most 100%, got 0%");
        assertThat(run("bench", "--settle-idle", "101", "--output", out)[1]).contains("got 101%");

        String[] cluster = run("bench", "--cluster", "3", "--settle-wait", "0", "--output", out);
        assertThat(cluster[0]).isEqualTo(Integer.toString(ExitCodes.USAGE));
        assertThat(cluster[1]).contains("--settle-wait does not go with --cluster");
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

    @Test
    void faultRunsGoWithAClusterRunAndTheMainBenchsOptionsDoNot(@TempDir Path dir) {
        String out = dir.resolve("out").toString();

        String[] none = run("bench", "--cluster", "3", "--fault-runs", "0", "--output", out);
        assertThat(none[0]).isEqualTo(Integer.toString(ExitCodes.CONFIG));
        assertThat(none[1]).contains("fault runs must be at least 1, got 0");

        String[] withoutCluster = run("bench", "--fault-runs", "5", "--output", out);
        assertThat(withoutCluster[0]).isEqualTo(Integer.toString(ExitCodes.USAGE));
        assertThat(withoutCluster[1]).contains("--fault-runs goes with --cluster");

        String[] mainOptions = run("bench", "--cluster", "3", "--pairs", "5", "--only", "flood", "--output", out);
        assertThat(mainOptions[0]).isEqualTo(Integer.toString(ExitCodes.USAGE));
        assertThat(mainOptions[1]).contains("--pairs, --only do not go with --cluster, which reads only --cluster, "
                + "--compare, --config, --fault-runs, --output, --quick, --turns");
        assertThat(dir.resolve("out")).doesNotExist();
    }

    @Test
    void aClusterRunComparesOnlyWithAClusterRunAndTheMainBenchOnlyWithItsOwn(@TempDir Path dir) throws IOException {
        String out = dir.resolve("out").toString();
        Path main = Files.writeString(dir.resolve("results.json"), "{\"ladder\": [], \"figures\": []}");
        Path cluster = Files.writeString(dir.resolve("cluster-results.json"), "{\"throughput\": [], \"figures\": []}");
        Path oldCluster = Files.writeString(dir.resolve("old-cluster-results.json"), "{\"throughput\": [], \"faults\": []}");

        String[] mainAsBase = run("bench", "--cluster", "3", "--compare", main.toString(), "--output", out);
        assertThat(mainAsBase[0]).isEqualTo(Integer.toString(ExitCodes.CONFIG));
        assertThat(mainAsBase[1]).contains("results.json is a results.json of turnstream bench, which has other "
                + "figures: compare turnstream bench --cluster with an earlier cluster-results.json");

        String[] clusterAsBase = run("bench", "--compare", cluster.toString(), "--output", out);
        assertThat(clusterAsBase[0]).isEqualTo(Integer.toString(ExitCodes.CONFIG));
        assertThat(clusterAsBase[1]).contains("is a cluster-results.json of turnstream bench --cluster");

        String[] beforeFigures = run("bench", "--cluster", "3", "--compare", oldCluster.toString(), "--output", out);
        assertThat(beforeFigures[1]).contains("has no \"figures\": not a cluster-results.json of turnstream bench "
                + "--cluster, or one written before figures had a spread");
        assertThat(dir.resolve("out")).doesNotExist();
    }

    @Test
    void aConfigKeyTheBenchWouldNotHonourIsAConfigErrorNamingIt(@TempDir Path dir) throws IOException {
        String out = dir.resolve("out").toString();
        Path gateway = Files.writeString(dir.resolve("gateway.properties"),
                "main.consumer.max.poll.records=500\nturnstream.gateway.tenant.max-concurrent-turns=7\n");
        Path topics = Files.writeString(dir.resolve("topics.properties"), "turnstream.topic.upserts=mine\n");

        String[] inProcess = run("bench", "--config", gateway.toString(), "--output", out);
        assertThat(inProcess[0]).isEqualTo(Integer.toString(ExitCodes.CONFIG));
        assertThat(inProcess[1]).contains("turnstream.gateway.tenant.max-concurrent-turns is read by neither the topology "
                + "nor the pass-through app");

        String[] cluster = run("bench", "--cluster", "3", "--config", topics.toString(), "--output", out);
        assertThat(cluster[0]).isEqualTo(Integer.toString(ExitCodes.CONFIG));
        assertThat(cluster[1]).contains("turnstream.topic.upserts is set by the bench for each application it starts");
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
