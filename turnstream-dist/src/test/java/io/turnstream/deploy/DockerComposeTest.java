package io.turnstream.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.cli.CliRun;
import io.turnstream.cli.Main;
import io.turnstream.model.Topics;
import io.turnstream.runtime.TenantClaims;
import io.turnstream.runtime.TurnstreamProcess;
import io.turnstream.security.ClientFile;
import io.turnstream.security.PrincipalProbe;
import io.turnstream.testsupport.UsesBroker;
import io.turnstream.testsupport.UsesProcesses;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.errors.UnsupportedSaslMechanismException;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * docker-compose.yml cannot run here (no Docker engine), so what is checked is what can be without one:
 * the file parses, every service built from our image runs a real subcommand with options that parse and
 * environment variables the code reads, Kafka is secured as {@code broker --secure} secures it and
 * publishes no port, and each service logs in as its own principal from a volume only it mounts. Then the
 * compose file's own broker command and credentials step run for real, as processes on this machine
 * (only the paths, the advertised host and the port are this machine's), and each service's file is
 * tried on that broker.
 */
class DockerComposeTest {

    /** The directory each service's credentials volume is mounted at, and where its --config points. */
    private static final String CREDENTIALS = "/var/lib/turnstream/kafka/credentials";
    /** Who logs in as whom: the one-shot topic creation as the admin, each service as itself. */
    private static final Map<String, String> PRINCIPAL_OF = new LinkedHashMap<>(Map.of(
            "topics", "admin", "topology", "topology", "tool-executor", "tool-executor", "gateway", "gateway"));
    /** The principals that sign or check tenant claims, so get the claim key too. */
    private static final List<String> CLAIM_KEY_HOLDERS = List.of("gateway", "topology", "tool-executor");

    private static ComposeFile compose;
    private static String mainSources;

    @TempDir
    static Path dir;

    @BeforeAll
    static void readComposeFileAndSources() throws IOException {
        compose = ComposeFile.read();
        try (Stream<Path> modules = Files.list(ComposeFile.ROOT)) {
            StringBuilder all = new StringBuilder();
            modules.map(module -> module.resolve("src/main/java")).filter(Files::isDirectory)
                    .flatMap(DockerComposeTest::walk)
                    .filter(f -> f.toString().endsWith(".java")).forEach(f -> all.append(read(f)));
            mainSources = all.toString();
        }
    }

    @Test
    void theDeploymentHasASecuredBrokerACredentialsStepTopicCreationAndTheThreeServices() {
        assertThat(compose.serviceNames())
                .containsExactlyInAnyOrder("kafka", "credentials", "topics", "topology", "tool-executor", "gateway");
        assertThat(compose.command("kafka")).startsWith("broker", "--secure");
        assertThat(compose.ports("gateway")).contains("8080:8080");
    }

    @Test
    void everyTurnstreamServiceRunsARealSubcommandWhoseOptionsParse() {
        Map<String, JsonNode> services = compose.turnstreamCommands();
        assertThat(services).containsOnlyKeys("kafka", "topics", "topology", "tool-executor", "gateway");
        services.keySet().forEach(name -> {
            List<String> command = compose.command(name);
            assertThat(Main.commandLine().getSubcommands()).as("service %s", name).containsKey(command.get(0));
            CommandLine.ParseResult parsed = Main.commandLine().parseArgs(command.toArray(String[]::new));
            assertThat(parsed.subcommand().commandSpec().name()).isEqualTo(command.get(0));
        });
    }

    @Test
    void everyEnvironmentVariableAServiceGetsIsReadByTheCode() {
        compose.turnstreamCommands().forEach((name, service) -> ComposeFile.fieldNames(service.get("environment")).forEach(
                variable -> assertThat(mainSources).as("%s sets %s", name, variable).contains("\"" + variable + "\"")));
        assertThat(ComposeFile.fieldNames(compose.service("gateway").get("environment")))
                .contains("ANTHROPIC_API_KEY", "OPENAI_API_KEY");
    }

    @Test
    void theGatewayOnEveryInterfaceRequiresApiKeysAndKeepsItsManagementPortLocal() {
        JsonNode gateway = compose.service("gateway");
        assertThat(gateway.at("/environment/TURNSTREAM_API_KEYS").asText()).as("no default key: compose refuses to start without one")
                .startsWith("${TURNSTREAM_API_KEYS:?");
        assertThat(compose.command("gateway")).doesNotContain("--insecure").contains("--management-port");
        assertThat(compose.ports("gateway")).contains("127.0.0.1:8083:8083");
    }

    /** Issue 21: "docker-compose publishes the broker's PLAINTEXT listener on every interface". */
    @Test
    void noBrokerPortIsPublishedAndOnlyTheGatewayApiIsOnAPublicInterface() {
        assertThat(compose.ports("kafka")).as("Kafka is reachable inside the compose network only").isEmpty();
        assertThat(compose.service("kafka").has("network_mode")).isFalse();
        for (String service : compose.serviceNames()) {
            for (String port : compose.ports(service)) {
                if (!(service.equals("gateway") && port.equals("8080:8080"))) {
                    assertThat(port).as("%s publishes %s", service, port).startsWith("127.0.0.1:");
                }
            }
        }
    }

    /** Issue 21: "no service uses SASL or ACLs": the compose broker is broker --secure, on the network with SCRAM only. */
    @Test
    void theBrokerRunsSecureAsBrokerSecureDoes() {
        assertThat(compose.command("kafka")).contains("--secure");
        assertThat(compose.option("kafka", "--host")).hasValue("0.0.0.0");
        assertThat(compose.option("kafka", "--advertised-host")).hasValue("kafka");
        assertThat(compose.option("kafka", "--data-dir").map(data -> data + "/credentials"))
                .as("the broker names the claim key's path in its data directory in the client files; each service "
                        + "mounts its copy there").hasValue(CREDENTIALS);
        assertThat(compose.service("kafka").at("/healthcheck/test").toString())
                .contains(compose.option("kafka", "--ready-file").orElseThrow());
        for (String service : compose.turnstreamCommands().keySet()) {
            assertThat(ComposeFile.fieldNames(compose.service(service).get("environment"))).as(service)
                    .doesNotContain("TURNSTREAM_BOOTSTRAP_SERVERS");
        }
    }

    /**
     * Each service's --config is its own principal's file, in a volume that only it (and the step that fills
     * it) mounts, read-only: no service can read another's password, and only the three services that sign
     * and check tenant claims get the claim key.
     */
    @Test
    void eachServiceLogsInAsItsOwnPrincipalFromAVolumeOnlyItMounts() {
        PRINCIPAL_OF.forEach((service, principal) -> {
            assertThat(compose.option(service, "--config")).as(service).hasValue(CREDENTIALS + "/" + principal + ".properties");
            ComposeFile.Mount mount = compose.mountAt(service, CREDENTIALS).orElseThrow();
            assertThat(mount.readOnly()).as("%s mounts its credentials read-only", service).isTrue();
            assertThat(mount.source()).isEqualTo(principal + "-credentials");
            assertThat(compose.servicesMounting(mount.source())).containsExactlyInAnyOrder(service, "credentials");
            assertThat(compose.mountAt("credentials", "/var/lib/turnstream/credentials-for/" + principal))
                    .hasValueSatisfying(filled -> assertThat(filled.source()).isEqualTo(mount.source()));
        });
        assertThat(compose.servicesMounting("kafka-data")).as("the broker's data, with every password")
                .containsExactlyInAnyOrder("kafka", "credentials");
        assertThat(compose.mounts("credentials")).filteredOn(mount -> mount.source().equals("kafka-data"))
                .singleElement().satisfies(mount -> assertThat(mount.readOnly()).isTrue());
    }

    @Test
    void theServicesAreBuiltByTheRepositorysDockerfileAndStartInOrder() throws IOException {
        String dockerfile = Files.readString(ComposeFile.ROOT.resolve("Dockerfile"));
        assertThat(dockerfile).contains("FROM eclipse-temurin:17", "-DskipTests package", "target/turnstream.jar",
                "/var/lib/turnstream/kafka/credentials", "/var/lib/turnstream/credentials-for/gateway", "chown -R turnstream");
        Map<String, String> awaits = Map.of("credentials", "kafka", "topics", "credentials", "topology", "topics",
                "tool-executor", "topics", "gateway", "topics");
        for (String name : compose.serviceNames()) {
            JsonNode service = compose.service(name);
            assertThat(service.get("build").asText()).as(name).isEqualTo(".");
            if (name.equals("kafka")) {
                assertThat(service.has("depends_on")).isFalse();
            } else {
                assertThat(ComposeFile.fieldNames(service.get("depends_on"))).as(name).containsExactly(awaits.get(name));
            }
        }
        assertThat(compose.service("credentials").at("/depends_on/kafka/condition").asText()).isEqualTo("service_healthy");
    }

    /**
     * The compose file's broker command and credentials step, run as they are written (only the data paths,
     * the advertised host and the port are this machine's): the broker listens on every interface, refuses
     * clients without a password and SASL/PLAIN, the credentials step hands each service only its own files,
     * and with them the topic creation runs as the admin and each service does its work and nothing else.
     */
    @Test
    @UsesBroker
    @UsesProcesses
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void theComposedBrokerAndCredentialsStepRunAndEachServicesFileLogsInAsItsPrincipal() throws Exception {
        Path data = dir.resolve("kafka-data");
        List<String> brokerCommand = new ArrayList<>(compose.command("kafka"));
        replaceOption(brokerCommand, "--advertised-host", "127.0.0.1");
        replaceOption(brokerCommand, "--port", "0");
        replaceOption(brokerCommand, "--data-dir", data.resolve("kafka").toString());
        replaceOption(brokerCommand, "--ready-file", data.resolve("kafka").resolve("ready").toString());
        try (TurnstreamProcess broker = TurnstreamProcess.start("compose-kafka", Map.of(), brokerCommand.toArray(String[]::new))) {
            Path ready = data.resolve("kafka").resolve("ready");
            Awaitility.await("the ready file").atMost(Duration.ofMinutes(2)).until(() -> Files.exists(ready) || !broker.isAlive());
            assertThat(broker.isAlive()).as("broker stderr: %s", broker.stderr()).isTrue();
            String bootstrap = Files.readString(ready).lines().findFirst().orElseThrow().substring("bootstrap.servers=".length());

            Path brokerCredentials = data.resolve("kafka").resolve("credentials");
            Path handedOut = runCredentialsStep(brokerCredentials);
            Map<String, Path> fileOf = new LinkedHashMap<>();
            PRINCIPAL_OF.forEach((service, principal) -> fileOf.put(service,
                    asThisMachineSees(handedOut.resolve(principal), principal, bootstrap, brokerCredentials)));

            assertThat(CliRun.succeeding("topics", "--config", fileOf.get("topics").toString(), "--partitions", "1"))
                    .contains("created  llm.upserts");
            Topics t = Topics.DEFAULTS;
            assertThat(PrincipalProbe.using(fileOf.get("topics")).write(t.toolCalls())).as("the admin writes anything").isTrue();
            PrincipalProbe gateway = PrincipalProbe.using(fileOf.get("gateway"));
            assertThat(gateway.write(t.rawEvents())).isTrue();
            assertThat(gateway.write(t.toolCalls())).isFalse();
            PrincipalProbe executor = PrincipalProbe.using(fileOf.get("tool-executor"));
            assertThat(executor.read(t.toolCalls())).isTrue();
            assertThat(executor.read(t.itemState())).isFalse();
            PrincipalProbe topology = PrincipalProbe.using(fileOf.get("topology"));
            assertThat(topology.write(t.upserts())).isTrue();
            assertThat(topology.write(t.turnRequests())).isFalse();

            assertThatThrownBy(() -> listTopics(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap)))
                    .as("a client without a password gets nothing").isNotNull();
            String gatewayPassword = ClientFile.password(fileOf.get("gateway"));
            assertThatThrownBy(() -> listTopics(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                    "security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "PLAIN", "sasl.jaas.config",
                    "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"gateway\" password=\""
                            + gatewayPassword + "\";")))
                    .as("SASL/PLAIN, which sends the password, is offered on loopback only")
                    .hasRootCauseInstanceOf(UnsupportedSaslMechanismException.class)
                    .hasMessageContaining("enabled mechanisms are [SCRAM-SHA-256]");
            assertThat(Files.readString(data.resolve("kafka").resolve("credentials").resolve("gateway.librdkafka.conf")))
                    .contains("sasl.mechanisms=SCRAM-SHA-256");
        }
    }

    /** The compose file's credentials step, its shell script run with sh; returns where it put each principal's files. */
    private static Path runCredentialsStep(Path brokerCredentials) throws Exception {
        List<String> entrypoint = compose.entrypoint("credentials");
        assertThat(entrypoint.subList(0, 2)).containsExactly("sh", "-c");
        assertThat(entrypoint.subList(4, 6)).containsExactly("/broker/kafka/credentials", "/var/lib/turnstream/credentials-for");
        Path target = Files.createDirectories(dir.resolve("credentials-for"));
        for (String principal : PRINCIPAL_OF.values()) {
            Files.createDirectories(target.resolve(principal));
        }
        // compose writes a literal $ as $$
        Process step = new ProcessBuilder("sh", "-c", entrypoint.get(2).replace("$$", "$"), entrypoint.get(3),
                brokerCredentials.toString(), target.toString()).redirectErrorStream(true).start();
        String output = new String(step.getInputStream().readAllBytes());
        assertThat(step.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(step.exitValue()).as(output).isZero();
        for (String principal : PRINCIPAL_OF.values()) {
            try (Stream<Path> files = Files.list(target.resolve(principal))) {
                List<String> names = files.map(file -> file.getFileName().toString()).toList();
                if (CLAIM_KEY_HOLDERS.contains(principal)) {
                    assertThat(names).as(principal).containsExactlyInAnyOrder(principal + ".properties", "tenant-claim.key");
                } else {
                    assertThat(names).as(principal).containsExactly(principal + ".properties");
                }
            }
            assertThat(Files.getPosixFilePermissions(target.resolve(principal).resolve(principal + ".properties")))
                    .as("copied with its owner-only mode").hasSize(2);
        }
        return target;
    }

    /**
     * A service's client file as the compose file hands it out, checked to be its principal's, with the claim key's
     * path (in a container, its copy in the service's volume) pointing to the copy beside it.
     */
    private static Path asThisMachineSees(Path volume, String principal, String bootstrap, Path brokerCredentials) {
        Properties client = ClientFile.load(volume.resolve(principal + ".properties"));
        assertThat(client.getProperty("bootstrap.servers")).isEqualTo(bootstrap);
        assertThat(client.getProperty("sasl.mechanism")).isEqualTo("SCRAM-SHA-256");
        assertThat(client.getProperty("sasl.jaas.config")).contains("username=\"" + principal + "\"");
        String keyFile = client.getProperty(TenantClaims.KEY_FILE);
        if (CLAIM_KEY_HOLDERS.contains(principal)) {
            assertThat(keyFile).isEqualTo(brokerCredentials.resolve("tenant-claim.key").toString());
            client.setProperty(TenantClaims.KEY_FILE, volume.resolve("tenant-claim.key").toString());
        } else {
            assertThat(keyFile).isNull();
        }
        return ClientFile.store(client, dir.resolve(principal + "-as-seen-here.properties"));
    }

    private static void listTopics(Map<String, Object> client) throws Exception {
        Map<String, Object> settings = new LinkedHashMap<>(client);
        settings.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 5000);
        settings.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5000);
        try (Admin admin = Admin.create(settings)) {
            admin.listTopics().names().get(30, TimeUnit.SECONDS);
        }
    }


    private static void replaceOption(List<String> command, String option, String value) {
        int at = command.indexOf(option);
        assertThat(at).as("the compose command has %s", option).isPositive();
        command.set(at + 1, value);
    }



    private static Stream<Path> walk(Path sources) {
        try (Stream<Path> files = Files.walk(sources)) {
            return files.toList().stream();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
