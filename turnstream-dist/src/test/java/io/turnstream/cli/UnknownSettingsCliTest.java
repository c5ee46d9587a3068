package io.turnstream.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.turnstream.runtime.TurnstreamKeys;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every command that reads {@code --config} refuses a {@code turnstream.} key that no component reads, before it
 * connects to anything: exit code 4, one line naming the key, the nearest known key and where the keys are documented.
 */
class UnknownSettingsCliTest {

    /** A broker address nothing listens on: every command must fail on the file before it would try it. */
    private static final String NOBODY = "127.0.0.1:1";

    @TempDir
    Path dir;

    @Test
    void theTopologyRefusesAMisspeltKey() throws IOException {
        assertRefused(config("turnstream.batch.timout.ms=500\n"), "turnstream.batch.timout.ms", "turnstream.batch.timeout.ms",
                "topology", "--bootstrap-servers", NOBODY, "--health-port", "-1");
    }

    @Test
    void theGatewayRefusesAMisspeltKey() throws IOException {
        assertRefused(config("turnstream.gateway.max-step=5\n"), "turnstream.gateway.max-step", "turnstream.gateway.max-steps",
                "gateway", "--bootstrap-servers", NOBODY);
    }

    @Test
    void theToolExecutorRefusesAMisspeltKey() throws IOException {
        Path workspace = Files.createDirectory(dir.resolve("workspace"));
        assertRefused(config("turnstream.tool-executor.max-concurency=4\n"), "turnstream.tool-executor.max-concurency",
                "turnstream.tool-executor.max-concurrency",
                "tool-executor", "--bootstrap-servers", NOBODY, "--workspace", workspace.toString(), "--health-port", "-1");
    }

    @Test
    void topicsAndAclsRefuseAMisspeltKey() throws IOException {
        assertRefused(config("turnstream.topic.raw-event=mine.raw\n"), "turnstream.topic.raw-event", "turnstream.topic.raw-events",
                "topics", "--bootstrap-servers", NOBODY);
        assertRefused(config("turnstream.gateway.groupid=gw\n"), "turnstream.gateway.groupid", "turnstream.gateway.group-id",
                "acls", "--print");
    }

    @Test
    void theBenchRefusesAMisspeltKeyWithAndWithoutCluster() throws IOException {
        String out = dir.resolve("out").toString();
        Path file = config("turnstream.gateway.tenant.acme.max-token-per-day=1000\n");
        assertRefused(file, "turnstream.gateway.tenant.acme.max-token-per-day",
                "turnstream.gateway.tenant.<tenant>.max-tokens-per-day", "bench", "--output", out);
        assertRefused(file, "turnstream.gateway.tenant.acme.max-token-per-day",
                "turnstream.gateway.tenant.<tenant>.max-tokens-per-day", "bench", "--cluster", "3", "--output", out);
        assertThat(dir.resolve("out")).doesNotExist();
    }

    @Test
    void connectRefusesAMisspeltKey() throws IOException {
        ConnectCommand connect = new ConnectCommand();
        connect.config = config("turnstream.serde.fromat=avro\n");
        connect.bootstrapServers = NOBODY;
        assertThatThrownBy(connect::start).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown Turnstream setting turnstream.serde.fromat (did you mean turnstream.serde.format?)");
    }

    private Path config(String text) throws IOException {
        return Files.writeString(Files.createTempFile(dir, "app", ".properties"), "linger.ms=5\n" + text);
    }

    private static void assertRefused(Path file, String key, String suggestion, String... args) {
        String[] withConfig = new String[args.length + 2];
        System.arraycopy(args, 0, withConfig, 0, args.length);
        withConfig[args.length] = "--config";
        withConfig[args.length + 1] = file.toString();
        CliRun run = CliRun.of(withConfig);
        assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCodes.CONFIG);
        assertThat(run.err()).startsWith("turnstream " + args[0] + ": error: ")
                .contains(file + ": unknown Turnstream setting " + key + " (did you mean " + suggestion + "?)")
                .contains(TurnstreamKeys.DOCUMENTED_IN)
                .doesNotContain("\tat ");
        assertThat(run.err().strip().lines()).hasSize(1);
    }
}
