package io.turnstream.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.Json;
import io.turnstream.model.Topics;
import io.turnstream.runtime.CommittedReader;
import io.turnstream.runtime.FreePorts;
import io.turnstream.runtime.TestCluster;
import io.turnstream.runtime.TurnstreamProcess;
import io.turnstream.testsupport.UsesBroker;
import io.turnstream.testsupport.UsesProcesses;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The deployment shape with the services' own jars and nothing else: topology, tool executor and gateway,
 * each {@code java -jar turnstream-<service>.jar} with its flags, environment or {@code --config}, run a turn
 * with a tool call on a real broker. None of the jars holds the broker, Scala, Connect, Debezium, demo or bench,
 * and only the topology's holds Kafka Streams and RocksDB.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
@UsesBroker
@UsesProcesses
class ServiceJarsIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(90);
    private static final RunnableJar TOPOLOGY = RunnableJar.of("turnstream-topology-service", "turnstream-topology");
    private static final RunnableJar TOOL_EXECUTOR = RunnableJar.of("turnstream-tool-executor", "turnstream-tool-executor");
    private static final RunnableJar GATEWAY = RunnableJar.of("turnstream-gateway", "turnstream-gateway");

    @Test
    void eachServiceRunsFromItsOwnJarWithNothingOfTheDist() {
        for (RunnableJar jar : List.of(TOPOLOGY, TOOL_EXECUTOR, GATEWAY)) {
            jar.assertShipsNothingOfTheDist();
            jar.assertPrintsItsHelp();
        }
    }

    @Test
    void onlyTheTopologyShipsKafkaStreams() {
        TOPOLOGY.assertShipsKafkaStreams();
        for (RunnableJar jar : List.of(TOOL_EXECUTOR, GATEWAY)) {
            jar.assertShipsNoKafkaStreams();
        }
    }

    @Test
    void theThreeJarsRunATurnWithAToolCall(@TempDir Path dir) throws Exception {
        Path workspace = Files.createDirectory(dir.resolve("workspace"));
        Files.writeString(workspace.resolve("notes.md"), "# Notes\nThe launch is on Tuesday.\n");
        Path topologyConfig = Files.writeString(dir.resolve("topology.properties"),
                "turnstream.application.id=service-jars-it\nturnstream.state.dir=" + dir.resolve("state") + "\n");
        try (TestCluster cluster = TestCluster.start(dir.resolve("kafka"), 1, Map.of())) {
            // chosen once the broker listens, so it cannot take one of them in between
            List<Integer> ports = FreePorts.take(4);
            int topologyHealth = ports.get(0);
            int executorHealth = ports.get(1);
            int gatewayPort = ports.get(2);
            int gatewayManagement = ports.get(3);
            try (TurnstreamProcess topology = TOPOLOGY.start(Map.of(), "--bootstrap-servers", cluster.bootstrapServers(),
                         "--config", topologyConfig.toString(), "--health-port", String.valueOf(topologyHealth));
                 TurnstreamProcess executor = TOOL_EXECUTOR.start(Map.of(), "--bootstrap-servers", cluster.bootstrapServers(),
                         "--workspace", workspace.toString(), "--health-port", String.valueOf(executorHealth));
                 TurnstreamProcess gateway = GATEWAY.start(Map.of("TURNSTREAM_BOOTSTRAP_SERVERS", cluster.bootstrapServers()),
                         "--port", String.valueOf(gatewayPort), "--management-port", String.valueOf(gatewayManagement))) {
                topology.awaitHealthy(topologyHealth);
                executor.awaitHealthy(executorHealth);
                gateway.awaitHealthy(gatewayManagement);

                String turnId = startTurn(gatewayPort, "What is in this workspace?");
                String upserts = String.join("\n", upsertsUntilTheTurnEnds(cluster, turnId));
                assertThat(upserts).contains("\"turn_completed\"", "list_files", "notes.md").doesNotContain("\"turn_error\"");

                gateway.terminate();
                assertThat(gateway.stderr()).as("logged through the jar's own log4j2.xml").contains("gateway stopped");
            }
        }
    }

    private static String startTurn(int gatewayPort, String prompt) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gatewayPort + "/v1/turns"))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(Json.toString(Map.of("prompt", prompt)))).build();
        HttpResponse<String> started = HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
        assertThat(started.statusCode()).as(started.body()).isEqualTo(202);
        return Json.MAPPER.readTree(started.body()).get("turnId").asText();
    }

    /** The turn's upserts as JSON, once its last one ({@code turn_completed} or {@code turn_error}) is there. */
    private static List<String> upsertsUntilTheTurnEnds(TestCluster cluster, String turnId) {
        try (CommittedReader reader = new CommittedReader(cluster.bootstrapServers(), Topics.DEFAULTS.upserts())) {
            return reader.awaitUntil(TIMEOUT, read -> read.stream().anyMatch(r -> turnId.equals(r.key())
                            && (r.value().contains("\"turn_completed\"") || r.value().contains("\"turn_error\""))))
                    .stream().filter(r -> turnId.equals(r.key())).map(ConsumerRecord::value).toList();
        }
    }
}
