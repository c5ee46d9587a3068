package io.turnstream.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.turnstream.cli.Main;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * docker-compose.yml cannot run here (no Docker engine), so what can be checked is: the file parses,
 * every service built from our image runs a real subcommand with options that parse, and every
 * environment variable it sets is one the code reads.
 */
class DockerComposeTest {

    /** The repository root: tests run in the module's directory. */
    private static final Path ROOT = Path.of("..");

    private static JsonNode compose;
    private static String mainSources;

    @BeforeAll
    static void readComposeFileAndSources() throws IOException {
        compose = new ObjectMapper(new YAMLFactory()).readTree(ROOT.resolve("docker-compose.yml").toFile());
        try (Stream<Path> modules = Files.list(ROOT)) {
            StringBuilder all = new StringBuilder();
            modules.map(module -> module.resolve("src/main/java")).filter(Files::isDirectory)
                    .flatMap(DockerComposeTest::walk)
                    .filter(f -> f.toString().endsWith(".java")).forEach(f -> all.append(read(f)));
            mainSources = all.toString();
        }
    }

    @Test
    void theDeploymentHasABrokerTopicCreationAndTheThreeServices() {
        assertThat(fieldNames(compose.get("services")))
                .containsExactlyInAnyOrder("kafka", "topics", "topology", "tool-executor", "gateway");
        assertThat(compose.at("/services/kafka/image").asText()).startsWith("apache/kafka:");
        assertThat(compose.at("/services/kafka/environment/KAFKA_PROCESS_ROLES").asText()).isEqualTo("broker,controller");
        assertThat(compose.at("/services/gateway/ports").toString()).contains("8080:8080");
    }

    @Test
    void everyTurnstreamServiceRunsARealSubcommandWhoseOptionsParse() {
        Map<String, JsonNode> services = turnstreamServices();
        assertThat(services).containsOnlyKeys("topics", "topology", "tool-executor", "gateway");
        services.forEach((name, service) -> {
            List<String> command = new ArrayList<>();
            service.get("command").forEach(arg -> command.add(arg.asText()));
            assertThat(Main.commandLine().getSubcommands()).as("service %s", name).containsKey(command.get(0));
            CommandLine.ParseResult parsed = Main.commandLine().parseArgs(command.toArray(String[]::new));
            assertThat(parsed.subcommand().commandSpec().name()).isEqualTo(command.get(0));
        });
    }

    @Test
    void everyEnvironmentVariableAServiceGetsIsReadByTheCode() {
        turnstreamServices().forEach((name, service) -> fieldNames(service.get("environment")).forEach(variable ->
                assertThat(mainSources).as("%s sets %s", name, variable).contains("\"" + variable + "\"")));
        assertThat(fieldNames(compose.at("/services/gateway/environment")))
                .contains("TURNSTREAM_BOOTSTRAP_SERVERS", "ANTHROPIC_API_KEY", "OPENAI_API_KEY");
    }

    @Test
    void theGatewayOnEveryInterfaceRequiresApiKeysAndKeepsItsManagementPortLocal() {
        JsonNode gateway = compose.at("/services/gateway");
        assertThat(gateway.at("/environment/TURNSTREAM_API_KEYS").asText()).as("no default key: compose refuses to start without one")
                .startsWith("${TURNSTREAM_API_KEYS:?");
        assertThat(gateway.get("command").toString()).doesNotContain("--insecure").contains("--management-port");
        assertThat(gateway.get("ports").toString()).contains("127.0.0.1:8083:8083");
    }

    @Test
    void onlyTheGatewayApiIsPublishedOnAPublicInterface() {
        compose.get("services").fields().forEachRemaining(service -> {
            if (service.getValue().has("ports")) {
                service.getValue().get("ports").forEach(port -> {
                    if (!(service.getKey().equals("gateway") && port.asText().equals("8080:8080"))) {
                        assertThat(port.asText()).as("%s publishes %s", service.getKey(), port).startsWith("127.0.0.1:");
                    }
                });
            }
        });
    }

    @Test
    void theServicesAreBuiltByTheRepositorysDockerfileAndWaitForTheTopics() throws IOException {
        String dockerfile = Files.readString(ROOT.resolve("Dockerfile"));
        assertThat(dockerfile).contains("FROM eclipse-temurin:17", "-DskipTests package", "target/turnstream.jar");
        turnstreamServices().forEach((name, service) -> {
            assertThat(service.get("build").asText()).as(name).isEqualTo(".");
            String awaited = name.equals("topics") ? "kafka" : "topics";
            assertThat(fieldNames(service.get("depends_on"))).as(name).containsExactly(awaited);
        });
    }

    private static Stream<Path> walk(Path sources) {
        try (Stream<Path> files = Files.walk(sources)) {
            return files.toList().stream();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The services run from the image built here (the rest, Kafka, come from their own images). */
    private static Map<String, JsonNode> turnstreamServices() {
        Map<String, JsonNode> ours = new java.util.LinkedHashMap<>();
        compose.get("services").fields().forEachRemaining(service -> {
            if (service.getValue().has("build")) {
                ours.put(service.getKey(), service.getValue());
            }
        });
        return ours;
    }

    private static List<String> fieldNames(JsonNode node) {
        List<String> names = new ArrayList<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
