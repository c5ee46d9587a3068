package io.turnstream.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.turnstream.gateway.GatewayConfig;
import io.turnstream.gateway.loop.PriceTable;
import io.turnstream.gateway.security.SecurityConfig;
import io.turnstream.gateway.security.SpendPolicy;
import io.turnstream.gateway.thread.BusyThreadPolicy;
import io.turnstream.model.Topics;
import io.turnstream.runtime.HealthServer;
import io.turnstream.runtime.ServiceMetrics;
import io.turnstream.runtime.StreamsService;
import io.turnstream.runtime.TenantClaims;
import io.turnstream.runtime.TurnstreamKeys;
import io.turnstream.schema.WireFormats;
import io.turnstream.tools.ToolApprovals;
import io.turnstream.tools.ToolExecutorConfig;
import io.turnstream.topology.TopologyConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
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

    /** The keys the components name as constants are all registered (the check would refuse them otherwise). */
    @Test
    void theComponentsKeyConstantsAreRegistered() {
        assertThat(List.of(TopologyConfig.GRADIENT, TopologyConfig.MIN_GROWTH_FRACTION, TopologyConfig.BATCH_TIMEOUT_MS,
                TopologyConfig.IDLE_TIMEOUT_MS, TopologyConfig.PUNCTUATE_INTERVAL_MS, TopologyConfig.CLOSED_TURN_RETENTION_MS,
                TopologyConfig.ITEM_STATE_RETENTION_MS, TopologyConfig.APPLICATION_ID, TopologyConfig.STATE_DIR,
                TopologyConfig.COMMIT_INTERVAL_MS, TopologyConfig.COMMIT_BEHIND_INTERVAL_MS, TopologyConfig.COMMIT_BEHIND_AFTER_MS,
                StreamsService.MAX_THREAD_REPLACEMENTS, StreamsService.THREAD_REPLACEMENT_WINDOW_MS,
                StreamsService.CLOSE_TIMEOUT_MS, ServiceMetrics.KAFKA_REFRESH_MS, HealthServer.HOST,
                ClusterCheck.CONNECT_TIMEOUT_MS, WireFormats.FORMAT_CONFIG, TenantClaims.KEY_FILE,
                GatewayConfig.MANAGEMENT_PORT, GatewayConfig.MANAGEMENT_HOST, SecurityConfig.API_KEYS_FILE,
                SecurityConfig.INSECURE, SpendPolicy.ALLOWED_MODELS, BusyThreadPolicy.KEY, ToolExecutorConfig.WORKSPACE,
                PriceTable.PREFIX + "claude", ToolApprovals.PREFIX + "write_file"))
                .allMatch(TurnstreamKeys::isKnown);
        assertThat(Topics.DEFAULTS.byRole().keySet()).allMatch(role -> TurnstreamKeys.isKnown(Topics.PREFIX + role));
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
