package io.turnstream.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.turnstream.model.ItemAppend;
import io.turnstream.model.Json;
import io.turnstream.model.ToolResult;
import io.turnstream.model.Topics;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiPayloadType;
import io.turnstream.model.UpsertEnvelope;
import io.turnstream.runtime.CommittedReader;
import io.turnstream.runtime.FreePorts;
import io.turnstream.runtime.MultiNodeTestCluster;
import io.turnstream.runtime.TurnstreamProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The deployment shape on a real three-node cluster, every piece a process: 3 brokers, 2 topology
 * instances, 2 tool executors, 2 gateways (with the simulated provider, whose turns list the
 * workspace and read a file: two tool calls each). While batches of turns run, one broker is
 * SIGKILLed and restarted, then one topology instance, one executor and one gateway are SIGKILLed.
 * Every turn completes; a read_committed reader sees each turn's seq contiguous from 1 (no upsert
 * doubled or missing), each streamed item's appends rebuild its final content, and each tool call
 * has exactly one result.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class ClusterFaultsTest {

    /** Turns started just before each fault, so each fault hits turns mid-stream: 4 faults, 4 batches. */
    private static final int TURNS_PER_FAULT = 10;
    private static final Duration TIMEOUT = Duration.ofSeconds(240);
    private static final String PROMPT = "What is in this workspace?";
    /** Nine JVMs start at once on two shared cores: the first answer from the cluster may take a while. */
    private static final String CONNECT_TIMEOUT = "turnstream.connect.timeout.ms=60000";

    private final HttpClient http = HttpClient.newHttpClient();
    private final List<Service> services = new ArrayList<>();

    @Test
    void everyTurnCompletesOnceThroughABrokerATopologyAnExecutorAndAGatewayKilled(@TempDir Path dir) throws Exception {
        Path workspace = Files.createDirectories(dir.resolve("workspace"));
        Files.writeString(workspace.resolve("README.md"), "# Launch notes\nThe launch is on Tuesday; the demo runs at ten.\n");
        Files.writeString(workspace.resolve("plan.md"), "- dry run on Monday\n- launch on Tuesday\n");
        try (MultiNodeTestCluster kafka = MultiNodeTestCluster.start(dir.resolve("kafka"), 3, 6)) {
            String servers = kafka.bootstrapServers();
            Path common = Files.writeString(dir.resolve("common.properties"), String.join("\n",
                    CONNECT_TIMEOUT,
                    "turnstream.simulated.tokens-per-second=30",
                    "turnstream.application.id=cluster-faults",
                    ""));
            List<Service> topologies = List.of(
                    start("topology-a", servers, common, "topology", "--state-dir", dir.resolve("state-a").toString()),
                    start("topology-b", servers, common, "topology", "--state-dir", dir.resolve("state-b").toString()));
            List<Service> executors = List.of(executor("executor-a", servers, dir, workspace),
                    executor("executor-b", servers, dir, workspace));
            List<Service> gateways = List.of(gateway("gateway-a", servers, common), gateway("gateway-b", servers, common));
            for (Service service : services) {
                service.process().awaitHealthy(service.healthPort(), TIMEOUT);
            }
            try (CommittedReader upserts = new CommittedReader(servers, Topics.DEFAULTS.upserts());
                 CommittedReader appends = new CommittedReader(servers, Topics.DEFAULTS.itemAppends());
                 CommittedReader results = new CommittedReader(servers, Topics.DEFAULTS.toolResults())) {
                List<String> turns = new ArrayList<>();
                List<Fault> faults = List.of(
                        new Fault("broker 2", () -> {
                            kafka.kill(2);
                            kafka.restart(2);
                        }),
                        new Fault("topology-a", () -> topologies.get(0).process().kill()),
                        new Fault("executor-a", () -> executors.get(0).process().kill()),
                        new Fault("gateway-a", () -> gateways.get(0).process().kill()));
                for (Fault fault : faults) {
                    List<String> batch = startTurns(gateways.stream().filter(g -> g.process().isAlive()).toList());
                    turns.addAll(batch);
                    // the batch streams: the fault hits turns in the middle of their steps
                    await("first upserts of the batch before killing " + fault.what()).atMost(TIMEOUT)
                            .until(() -> turnsWithUpserts(upserts.poll(), batch) >= batch.size() / 2);
                    fault.inject().run();
                }

                List<UpsertEnvelope> all = await("every turn ended").atMost(TIMEOUT).pollInterval(Duration.ofSeconds(1))
                        .until(() -> parse(upserts.poll(), UpsertEnvelope.class),
                                read -> ended(read).containsAll(turns));
                assertEveryTurnCompletedExactlyOnce(turns, all);
                assertAppendsRebuildEveryItem(turns, all, parse(appends.poll(), ItemAppend.class));
                assertOneResultPerCall(turns, parse(results.poll(), ToolResult.class));
            } finally {
                services.forEach(service -> service.process().close());
            }
        }
    }

    // ---- the invariants ----

    private static void assertEveryTurnCompletedExactlyOnce(List<String> turns, List<UpsertEnvelope> all) {
        Map<String, List<UpsertEnvelope>> byTurn = all.stream().collect(Collectors.groupingBy(UpsertEnvelope::turnId));
        for (String turn : turns) {
            List<UpsertEnvelope> upserts = byTurn.get(turn);
            assertThat(upserts.stream().map(UpsertEnvelope::seq).toList())
                    .as("seq of turn %s: contiguous from 1, none doubled or missing", turn)
                    .containsExactlyElementsOf(LongStream.rangeClosed(1, upserts.size()).boxed().toList());
            assertThat(upserts.get(upserts.size() - 1).payload().type()).as("last upsert of turn %s", turn)
                    .isEqualTo(UiPayloadType.TURN_COMPLETED);
            assertThat(upserts).as("upserts of turn %s", turn)
                    .noneMatch(e -> e.payload().type() == UiPayloadType.TURN_ERROR);
        }
    }

    /** Each streamed item's appends, at contiguous offsets, are exactly the content of its last upsert. */
    private static void assertAppendsRebuildEveryItem(List<String> turns, List<UpsertEnvelope> all, List<ItemAppend> appends) {
        Map<String, UIUpsert> finalItems = all.stream().filter(e -> e.payload() instanceof UIUpsert)
                .map(e -> (UIUpsert) e.payload())
                .collect(Collectors.toMap(u -> u.turnId() + "/" + u.itemId(), Function.identity(),
                        (a, b) -> a.version() >= b.version() ? a : b));
        Map<String, List<ItemAppend>> byTurn = appends.stream().collect(Collectors.groupingBy(ItemAppend::turnId));
        int items = 0;
        for (String turn : turns) {
            List<ItemAppend> turnAppends = byTurn.getOrDefault(turn, List.of());
            assertThat(turnAppends.stream().map(ItemAppend::seq).toList())
                    .as("append seq of turn %s: contiguous from 1", turn)
                    .containsExactlyElementsOf(LongStream.rangeClosed(1, turnAppends.size()).boxed().toList());
            Map<String, List<ItemAppend>> byItem = turnAppends.stream()
                    .collect(Collectors.groupingBy(ItemAppend::itemId));
            for (Map.Entry<String, List<ItemAppend>> item : byItem.entrySet()) {
                StringBuilder text = new StringBuilder();
                for (ItemAppend append : item.getValue().stream().sorted(Comparator.comparingLong(ItemAppend::seq)).toList()) {
                    assertThat(append.offset()).as("offset of append %d of %s", append.seq(), item.getKey())
                            .isEqualTo(text.codePointCount(0, text.length()));
                    text.append(append.text());
                }
                UIUpsert last = finalItems.get(turn + "/" + item.getKey());
                assertThat(last).as("an upsert of item %s", item.getKey()).isNotNull();
                assertThat(text.toString()).as("appends of item %s of turn %s", item.getKey(), turn)
                        .isEqualTo(last.content());
                items++;
            }
        }
        assertThat(items).as("streamed items checked").isGreaterThanOrEqualTo(turns.size());
    }

    /** Each turn made its two tool calls (list the workspace, read a file), and each call has one result. */
    private static void assertOneResultPerCall(List<String> turns, List<ToolResult> results) {
        Set<String> ours = Set.copyOf(turns);
        Map<String, Long> perCall = results.stream().filter(r -> ours.contains(r.turnId()))
                .collect(Collectors.groupingBy(ToolResult::callId, Collectors.counting()));
        assertThat(perCall).as("results per call").allSatisfy((call, count) -> assertThat(count).as(call).isOne());
        Map<String, Long> perTurn = results.stream().filter(r -> ours.contains(r.turnId()))
                .collect(Collectors.groupingBy(ToolResult::turnId, Collectors.counting()));
        assertThat(perTurn).as("tool results per turn").hasSize(turns.size())
                .allSatisfy((turn, count) -> assertThat(count).as(turn).isEqualTo(2));
    }

    // ---- the pipeline ----

    private record Service(TurnstreamProcess process, int healthPort, int apiPort) {
    }

    private record Fault(String what, Injection inject) {
    }

    @FunctionalInterface
    private interface Injection {
        void run() throws Exception;
    }

    private Service start(String name, String servers, Path config, String... args) {
        int health = FreePorts.take();
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--bootstrap-servers", servers, "--config", config.toString(), "--health-port",
                String.valueOf(health)));
        Service service = new Service(TurnstreamProcess.start(name, Map.of(), all.toArray(String[]::new)), health, -1);
        services.add(service);
        return service;
    }

    private Service executor(String name, String servers, Path dir, Path workspace) throws Exception {
        // two executors on one workspace: each its own instance id (static membership, transactional id)
        Path config = Files.writeString(dir.resolve(name + ".properties"),
                CONNECT_TIMEOUT + "\nturnstream.tool-executor.instance-id=" + name + "\n");
        return start(name, servers, config, "tool-executor", "--workspace", workspace.toString());
    }

    private Service gateway(String name, String servers, Path config) {
        List<Integer> ports = FreePorts.take(2);
        Service service = new Service(TurnstreamProcess.start(name, Map.of(), "gateway", "--bootstrap-servers", servers,
                "--config", config.toString(), "--port", String.valueOf(ports.get(0)),
                "--management-port", String.valueOf(ports.get(1))), ports.get(1), ports.get(0));
        services.add(service);
        return service;
    }

    private List<String> startTurns(List<Service> gateways) throws Exception {
        List<String> turns = new ArrayList<>();
        for (int i = 0; i < TURNS_PER_FAULT; i++) {
            Service gateway = gateways.get(i % gateways.size());
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + gateway.apiPort() + "/v1/turns"))
                    .header("content-type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(Json.toString(Map.of("prompt", PROMPT)))).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).as(response.body()).isEqualTo(202);
            turns.add(Json.MAPPER.readTree(response.body()).get("turnId").asText());
        }
        return turns;
    }

    private static long turnsWithUpserts(List<ConsumerRecord<String, String>> upserts, List<String> batch) {
        Set<String> keys = upserts.stream().map(ConsumerRecord::key).collect(Collectors.toSet());
        return batch.stream().filter(keys::contains).count();
    }

    private static Set<String> ended(List<UpsertEnvelope> upserts) {
        return upserts.stream().filter(e -> e.payload().type() == UiPayloadType.TURN_COMPLETED
                || e.payload().type() == UiPayloadType.TURN_ERROR).map(UpsertEnvelope::turnId).collect(Collectors.toSet());
    }

    private static <T> List<T> parse(List<ConsumerRecord<String, String>> records, Class<T> type) {
        return records.stream().map(r -> Json.fromString(r.value(), type)).toList();
    }
}
