package io.turnstream.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.model.Json;
import io.turnstream.model.Topics;
import io.turnstream.runtime.FreePorts;
import io.turnstream.runtime.TurnstreamProcess;
import io.turnstream.testsupport.UsesProcesses;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@UsesProcesses
class CliTest {

    private static final Pattern READY_LINE = Pattern.compile("bootstrap\\.servers=(127\\.0\\.0\\.1:\\d+)\n");

    @Test
    void versionNamesTheKafkaVersionAndEverySubcommandHasHelp() {
        assertThat(TurnstreamVersion.kafkaVersion()).matches("\\d+\\.\\d+\\.\\d+.*");
        assertThat(CliRun.of("--version").out()).startsWith("turnstream ").contains("Kafka " + TurnstreamVersion.kafkaVersion());
        for (String subcommand : List.of("broker", "topics", "topology")) {
            CliRun help = CliRun.of(subcommand, "--help");
            assertThat(help.exitCode()).isZero();
            assertThat(help.out()).startsWith("Usage: turnstream " + subcommand);
        }
    }

    @Test
    void brokerPrintsItsReadyLineAndTopicsCreatesTheContractOnce(@TempDir Path dataDir) throws IOException {
        try (TurnstreamProcess broker = TurnstreamProcess.start("broker", Map.of("TURNSTREAM_LOG_FORMAT", "json"),
                "broker", "--port", "0", "--data-dir", dataDir.toString())) {
            String servers = awaitReadyLine(broker);

            CliRun first = CliRun.of("topics", "--bootstrap-servers", servers, "--partitions", "2");
            assertThat(first.exitCode()).as(first.err()).isZero();
            assertThat(first.out().lines()).hasSize(Topics.DEFAULTS.byRole().size()).allMatch(l -> l.startsWith("created "));
            assertThat(first.out()).containsPattern("created +llm.item-state +partitions=2 replicas=1 min.insync.replicas=1 cleanup.policy=compact");
            CliRun second = CliRun.of("topics", "--bootstrap-servers", servers);
            assertThat(second.out().lines()).hasSize(Topics.DEFAULTS.byRole().size()).allMatch(l -> l.startsWith("exists "));

            Path renamed = Files.writeString(dataDir.resolve("renamed.properties"), "turnstream.topic.raw-events=no.such.topic\n");
            CliRun topology = CliRun.of("topology", "--bootstrap-servers", servers, "--config", renamed.toString(), "--health-port", "-1");
            assertThat(topology.exitCode()).isEqualTo(ExitCodes.UNAVAILABLE);
            assertThat(topology.err()).isEqualTo("turnstream topology: error: topics missing on " + servers
                    + ": no.such.topic (create them with `turnstream topics`)\n");

            broker.terminate();
            assertThat(broker.stderr().lines()).isNotEmpty().allSatisfy(line -> {
                JsonNode json = Json.MAPPER.readTree(line);
                assertThat(json.has("log.level")).isTrue();
            });
            assertThat(broker.stderr()).contains("\"message\":\"broker stopped\"");
        }
    }

    @Test
    void anUnreachableBrokerIsOneErrorLineWithoutStackTrace(@TempDir Path dir) throws IOException {
        String nobody = "127.0.0.1:" + FreePorts.take();
        Path config = Files.writeString(dir.resolve("quick.properties"), "turnstream.connect.timeout.ms=1000\n");
        try (TurnstreamProcess topology = TurnstreamProcess.start("unreachable", Map.of(),
                "topology", "--bootstrap-servers", nobody, "--config", config.toString(), "--health-port", "-1")) {
            assertThat(topology.awaitExit(Duration.ofSeconds(60))).isEqualTo(ExitCodes.UNAVAILABLE);
            assertThat(topology.stderr().lines().toList()).containsExactly("turnstream topology: error: cannot reach Kafka at "
                    + nobody + " within 1 s: is the broker running, and are --bootstrap-servers (or "
                    + "TURNSTREAM_BOOTSTRAP_SERVERS) and the security settings in --config right?");
            assertThat(topology.stdout()).isEmpty();
        }
        for (List<String> service : List.of(List.of("gateway", "--port", "0"),
                List.of("tool-executor", "--workspace", dir.toString()))) {
            List<String> args = new java.util.ArrayList<>(service);
            args.addAll(List.of("--bootstrap-servers", nobody, "--config", config.toString()));
            CliRun run = CliRun.of(args.toArray(String[]::new));
            assertThat(run.exitCode()).as(service.get(0)).isEqualTo(ExitCodes.UNAVAILABLE);
            assertThat(run.err().lines().toList()).as(service.get(0)).containsExactly("turnstream " + service.get(0)
                    + ": error: cannot reach Kafka at " + nobody + " within 1 s: is the broker running, and are "
                    + "--bootstrap-servers (or TURNSTREAM_BOOTSTRAP_SERVERS) and the security settings in --config right?");
        }
    }

    @Test
    void noBrokerOrABadConfigFileIsAClearErrorWithItsOwnExitCode(@TempDir Path dir) throws IOException {
        CliRun noBroker = CliRun.of("topics", "--bootstrap-servers=");
        assertThat(noBroker.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(noBroker.err()).isEqualTo("turnstream topics: error: no Kafka broker given: pass "
                + "--bootstrap-servers HOST:PORT or set TURNSTREAM_BOOTSTRAP_SERVERS\n");

        CliRun missingFile = CliRun.of("topology", "--config", dir.resolve("absent.properties").toString());
        assertThat(missingFile.exitCode()).isEqualTo(ExitCodes.CONFIG);
        assertThat(missingFile.err()).contains("absent.properties does not exist");

        Path badGradient = Files.writeString(dir.resolve("bad.properties"),
                "bootstrap.servers=127.0.0.1:1\nturnstream.batch.gradient=ten,twenty\n");
        CliRun invalid = CliRun.of("topology", "--config", badGradient.toString());
        assertThat(invalid.exitCode()).isEqualTo(ExitCodes.CONFIG);
        assertThat(invalid.err()).startsWith("turnstream topology: error: turnstream.batch.gradient must be");

        CliRun unresolvable = CliRun.of("topics", "--bootstrap-servers", "no-such-host.invalid:9092");
        assertThat(unresolvable.exitCode()).isEqualTo(ExitCodes.UNAVAILABLE);
        assertThat(unresolvable.err()).isEqualTo("turnstream topics: error: cannot resolve any host of the "
                + "bootstrap servers no-such-host.invalid:9092\n");

        assertThat(CliRun.of("topics", "--partitions", "0", "--bootstrap-servers", "127.0.0.1:1").exitCode())
                .isEqualTo(ExitCodes.USAGE);
    }

    @Test
    void aBrokerPortThatIsTakenIsOneErrorLine() throws IOException {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CliRun broker = CliRun.of("broker", "--port", String.valueOf(taken.getLocalPort()));
            assertThat(broker.exitCode()).isEqualTo(ExitCodes.FAILURE);
            assertThat(broker.err()).isEqualTo("turnstream broker: error: port " + taken.getLocalPort()
                    + " on 127.0.0.1 is in use: stop what holds it or pick another with --port (0 picks a free one)\n");
        }
    }

    /** Issue 21: an open broker reachable from a network gave anyone every tenant's conversations. */
    @Test
    void aBrokerOnANetworkInterfaceMustBeSecure() {
        CliRun open = CliRun.of("broker", "--host", "0.0.0.0", "--port", "0");

        assertThat(open.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(open.err()).contains("--host 0.0.0.0 lets other machines reach the broker: add --secure");
    }

    private static String awaitReadyLine(TurnstreamProcess broker) {
        String stdout = Awaitility.await("bootstrap.servers line").atMost(Duration.ofSeconds(90))
                .until(broker::stdout, out -> !out.isEmpty() || !broker.isAlive());
        Matcher ready = READY_LINE.matcher(stdout);
        assertThat(ready.matches()).as("stdout is exactly the ready line: %s\nstderr: %s", stdout, broker.stderr()).isTrue();
        return ready.group(1);
    }
}
