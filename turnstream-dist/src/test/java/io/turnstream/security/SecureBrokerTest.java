package io.turnstream.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.turnstream.cli.CliRun;
import io.turnstream.model.Topics;
import io.turnstream.runtime.TenantClaims;
import io.turnstream.runtime.TurnstreamProcess;
import io.turnstream.testsupport.Requires;
import io.turnstream.testsupport.SystemTool;
import io.turnstream.testsupport.UsesBroker;
import io.turnstream.testsupport.UsesProcesses;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code turnstream broker --secure} on a real broker: every service's principal, with the client file
 * the broker wrote for it, can do what its service needs and is refused the rest.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
@UsesBroker
@UsesProcesses
class SecureBrokerTest {

    private static final Pattern READY = Pattern.compile("bootstrap\\.servers=(127\\.0\\.0\\.1:\\d+)\ncredentials=(.+)\n");
    private static final Topics T = Topics.DEFAULTS;
    private static final String LEDGER = "llm.tool-ledger";
    private static final String CALL_DEAD_LETTERS = "llm.tool-calls.dlq";
    private static final String SINK_DEAD_LETTERS = "llm.item-state.dlq";

    @TempDir
    static Path dir;

    private static TurnstreamProcess broker;
    private static Path credentials;

    @BeforeAll
    static void startSecureBrokerWithTopics() {
        broker = TurnstreamProcess.start("secure-broker", Map.of(), "broker", "--secure", "--port", "0",
                "--data-dir", dir.resolve("data").toString());
        String stdout = Awaitility.await("ready lines").atMost(Duration.ofSeconds(120))
                .until(broker::stdout, out -> out.contains("credentials=") || !broker.isAlive());
        Matcher ready = READY.matcher(stdout);
        assertThat(ready.matches()).as("stdout: %s\nstderr: %s", stdout, broker.stderr()).isTrue();
        credentials = Path.of(ready.group(2));
        assertThat(credentials).isEqualTo(dir.resolve("data").resolve("credentials"));

        assertThat(CliRun.succeeding("topics", "--config", file("admin").toString(), "--partitions", "1")).contains("created  llm.upserts");
        PrincipalProbe admin = PrincipalProbe.using(file("admin"));
        for (String topic : T.byRole().values()) {
            assertThat(admin.write(topic)).as("admin writes %s", topic).isTrue();
        }
    }

    @AfterAll
    static void stop() {
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void eachPrincipalHasAClientFileOnlyItsOwnerCanRead() throws Exception {
        for (String principal : List.of("admin", "gateway", "topology", "tool-executor", "connect")) {
            Path file = file(principal);
            assertThat(Files.getPosixFilePermissions(file))
                    .containsExactlyInAnyOrder(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);
            assertThat(Files.readString(file)).contains("security.protocol=SASL_PLAINTEXT", "sasl.mechanism=SCRAM-SHA-256",
                    "username\\=\"" + principal + "\"", "bootstrap.servers=127.0.0.1");
            Path librdkafka = librdkafkaFile(principal);
            assertThat(Files.getPosixFilePermissions(librdkafka))
                    .containsExactlyInAnyOrder(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);
            assertThat(Files.readString(librdkafka)).contains("security.protocol=SASL_PLAINTEXT", "sasl.mechanisms=PLAIN",
                    "sasl.username=" + principal + "\n", "bootstrap.servers=127.0.0.1");
        }
    }

    /** The services that check each other's tenant claims share a key no other principal is given. */
    @Test
    void theGatewayTopologyAndToolExecutorShareATenantClaimKeyThatNoOtherPrincipalHas() throws Exception {
        Path key = credentials.resolve("tenant-claim.key");
        assertThat(Files.getPosixFilePermissions(key))
                .containsExactlyInAnyOrder(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);
        assertThat(Files.readString(key).strip()).hasSizeGreaterThanOrEqualTo(32);
        for (String principal : List.of("gateway", "topology", "tool-executor", "admin", "connect")) {
            Properties settings = ClientFile.load(file(principal));
            assertThat(settings.getProperty(TenantClaims.KEY_FILE)).as(principal)
                    .isEqualTo(List.of("admin", "connect").contains(principal) ? null : key.toString());
        }
    }

    /**
     * The same least privilege through librdkafka, as non-Java clients see it: kcat with each principal's
     * {@code .librdkafka.conf} alone.
     */
    @Test
    @Requires(SystemTool.KCAT)
    void kcatWithEachPrincipalsFileDoesWhatItsServiceNeedsAndNothingElse() throws Exception {
        KcatProbe gateway = KcatProbe.using(librdkafkaFile("gateway"));
        assertThat(gateway.produce(T.rawEvents())).isTrue();
        assertThat(gateway.produce(T.turnRequests())).isTrue();
        assertThat(gateway.produce(T.toolCalls())).isFalse();
        assertThat(gateway.produce(T.toolResults())).isFalse();
        assertThat(gateway.consume(T.upserts())).isTrue();
        assertThat(gateway.consume(T.toolCalls())).isFalse();

        KcatProbe executor = KcatProbe.using(librdkafkaFile("tool-executor"));
        assertThat(executor.produce(T.toolResults())).isTrue();
        assertThat(executor.produce(T.rawEvents())).isFalse();
        assertThat(executor.produce(T.turnRequests())).isFalse();
        assertThat(executor.consume(T.toolCalls())).isTrue();
        assertThat(executor.consume(T.itemState())).isFalse();

        KcatProbe topology = KcatProbe.using(librdkafkaFile("topology"));
        assertThat(topology.consume(T.rawEvents())).isTrue();
        assertThat(topology.produce(T.upserts())).isTrue();
        assertThat(topology.produce(T.rawEvents())).isFalse();
        assertThat(topology.consume(T.toolResults())).isFalse();

        KcatProbe connect = KcatProbe.using(librdkafkaFile("connect"));
        assertThat(connect.consume(T.itemState())).isTrue();
        for (String topic : T.byRole().values()) {
            assertThat(connect.produce(topic)).as("connect writes %s", topic).isFalse();
        }
        assertThat(connect.consume(T.upserts())).isFalse();
    }

    @Test
    void theGatewayWritesRawEventsTurnRequestsAndControlButNoToolCalls() {
        PrincipalProbe gateway = PrincipalProbe.using(file("gateway"));
        assertThat(gateway.write(T.rawEvents())).isTrue();
        assertThat(gateway.write(T.turnRequests())).isTrue();
        assertThat(gateway.write(T.control())).isTrue();
        assertThat(gateway.write(T.threadAllowances())).as("tools allowed for a thread").isTrue();
        assertThat(gateway.write(T.deadLetters())).as("turn requests no owner can use").isTrue();
        assertThat(gateway.write(T.toolCalls())).isFalse();
        assertThat(gateway.write(T.toolResults())).isFalse();
        assertThat(gateway.write(T.upserts())).isFalse();
        assertThat(gateway.write(T.itemState())).isFalse();

        assertThat(gateway.read(T.upserts())).isTrue();
        assertThat(gateway.read(T.itemState())).isTrue();
        assertThat(gateway.read(T.toolResults())).isTrue();
        assertThat(gateway.read(T.deadLetters())).isFalse();
        assertThat(gateway.read(T.toolCalls())).isFalse();

        assertThat(gateway.commitIn("turnstream-gateway", T.turnRequests())).isTrue();
        assertThat(gateway.commitIn("turnstream-tool-executor", T.turnRequests())).isFalse();
        assertThat(gateway.transact("turnstream-gateway-turns-0")).isTrue();
        assertThat(gateway.transact("turnstream-tool-executor-vm1")).isFalse();
        assertThat(gateway.create("llm.anything")).isFalse();
    }

    @Test
    void theToolExecutorWritesResultsButNoRawEventsAndReadsNoConversations() {
        PrincipalProbe executor = PrincipalProbe.using(file("tool-executor"));
        assertThat(executor.create(LEDGER)).isTrue();
        assertThat(executor.create(CALL_DEAD_LETTERS)).isTrue();
        assertThat(executor.write(T.toolResults())).isTrue();
        assertThat(executor.write(T.control())).isTrue();
        assertThat(executor.write(T.toolDefinitions())).isTrue();
        assertThat(executor.write(LEDGER)).isTrue();
        assertThat(executor.write(T.rawEvents())).isFalse();
        assertThat(executor.write(T.toolCalls())).isFalse();
        assertThat(executor.write(T.turnRequests())).isFalse();

        assertThat(executor.read(T.toolCalls())).isTrue();
        assertThat(executor.read(T.control())).isTrue();
        assertThat(executor.read(T.itemState())).isFalse();
        assertThat(executor.read(T.upserts())).isFalse();
        assertThat(executor.read(T.rawEvents())).isFalse();

        assertThat(executor.commitIn("turnstream-tool-executor", T.toolCalls())).isTrue();
        assertThat(executor.commitIn("turnstream-gateway", T.toolCalls())).isFalse();
        assertThat(executor.transact("turnstream-tool-executor-vm1")).isTrue();
        assertThat(executor.transact("turnstream-gateway-turns-0")).isFalse();
        assertThat(executor.create("llm.anything")).isFalse();
    }

    @Test
    void theTopologyReadsRawEventsAndWritesItsOutputsAndItsOwnInternalTopics() {
        PrincipalProbe topology = PrincipalProbe.using(file("topology"));
        assertThat(topology.read(T.rawEvents())).isTrue();
        assertThat(topology.read(T.toolResults())).isFalse();
        assertThat(topology.read(T.control())).isFalse();
        for (String output : List.of(T.upserts(), T.itemState(), T.itemAppends(), T.toolCalls(), T.deadLetters())) {
            assertThat(topology.write(output)).as(output).isTrue();
        }
        assertThat(topology.write(T.rawEvents())).isFalse();
        assertThat(topology.write(T.toolResults())).isFalse();
        assertThat(topology.write(T.turnRequests())).isFalse();

        assertThat(topology.create("turnstream-topology-items-changelog")).isTrue();
        assertThat(topology.create("llm.anything")).isFalse();
        assertThat(topology.commitIn("turnstream-topology", T.rawEvents())).isTrue();
        assertThat(topology.commitIn("turnstream-gateway", T.rawEvents())).isFalse();
        assertThat(topology.transact("turnstream-topology-0b1c-1")).isTrue();
        assertThat(topology.transact("turnstream-gateway-turns-0")).isFalse();
    }

    @Test
    void connectReadsItemStateOnlyAndWritesOnlyItsDeadLetters() {
        PrincipalProbe connect = PrincipalProbe.using(file("connect"));
        assertThat(connect.read(T.itemState())).isTrue();
        assertThat(connect.read(T.upserts())).isFalse();
        assertThat(connect.read(T.rawEvents())).isFalse();
        assertThat(connect.create(SINK_DEAD_LETTERS)).isTrue();
        assertThat(connect.write(SINK_DEAD_LETTERS)).isTrue();
        assertThat(connect.write(T.itemState())).isFalse();
        assertThat(connect.commitIn("connect-turnstream-item-state-postgres", T.itemState())).isTrue();
        assertThat(connect.commitIn("turnstream-gateway", T.itemState())).isFalse();
    }

    @Test
    void aWrongPasswordOrNoCredentialsGetNothing() throws Exception {
        String gateway = Files.readString(file("gateway"));
        Path wrong = Files.writeString(dir.resolve("wrong.properties"),
                gateway.replaceAll("password\\\\=\"[0-9a-f]+\"", "password\\\\=\"not-it\""));
        assertThatThrownBy(() -> PrincipalProbe.using(wrong).write(T.turnRequests()))
                .hasRootCauseInstanceOf(SaslAuthenticationException.class);
    }

    @Test
    void aclsPrintShowsWhatTheBrokerEnforcesAndApplyIsIdempotent() throws Exception {
        List<String> printed = CliRun.succeeding("acls", "--print").lines().toList();
        Properties admin = ClientFile.load(file("admin"));
        try (Admin client = Admin.create(admin)) {
            List<String> enforced = client.describeAcls(AclBindingFilter.ANY).values().get(60, TimeUnit.SECONDS).stream()
                    .map(ServiceAcls::line).toList();
            assertThat(printed).containsExactlyInAnyOrderElementsOf(enforced.stream().distinct().toList());
        }
        assertThat(printed).contains("User:gateway ALLOW WRITE TOPIC LITERAL llm.raw-events",
                "User:topology ALLOW ALL TOPIC PREFIXED turnstream-topology-")
                .noneMatch(line -> line.startsWith("User:gateway ALLOW WRITE TOPIC LITERAL llm.tool-calls"));
        assertThat(CliRun.succeeding("acls", "--apply", "--config", file("admin").toString()).lines())
                .hasSameSizeAs(printed).allMatch(line -> line.startsWith("applied User:"));
        assertThat(CliRun.succeeding("acls", "--print", "--principal", "gateway=User:svc-gw"))
                .contains("User:svc-gw ALLOW WRITE TOPIC LITERAL llm.raw-events").doesNotContain("User:gateway ");
    }

    private static Path file(String principal) {
        return credentials.resolve(principal + ".properties");
    }

    private static Path librdkafkaFile(String principal) {
        return credentials.resolve(principal + ".librdkafka.conf");
    }

}
