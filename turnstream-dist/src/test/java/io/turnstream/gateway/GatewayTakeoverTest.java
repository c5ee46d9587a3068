package io.turnstream.gateway;

import static io.turnstream.gateway.ItemInvariants.assertEveryStartedItemIsClosedOnceAndNothingFollows;
import static io.turnstream.gateway.ItemInvariants.assertFinalContentIsTheStreamedText;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.gateway.sim.SimulatedAnthropicServer;
import io.turnstream.gateway.sim.SimulatedReply;
import io.turnstream.gateway.sim.SimulatedRequest;
import io.turnstream.gateway.sim.SimulatedText;
import io.turnstream.model.ChangeType;
import io.turnstream.model.ItemType;
import io.turnstream.model.Json;
import io.turnstream.model.Origins;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.Topics;
import io.turnstream.model.ToolState;
import io.turnstream.model.TurnActivity;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UpsertEnvelope;
import io.turnstream.runtime.CommittedReader;
import io.turnstream.runtime.FreePorts;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.StreamsService;
import io.turnstream.runtime.TestCluster;
import io.turnstream.runtime.TurnstreamProcess;
import io.turnstream.testsupport.UsesBroker;
import io.turnstream.testsupport.UsesProcesses;
import io.turnstream.tools.Tool;
import io.turnstream.tools.ToolApprovals;
import io.turnstream.tools.ToolContext;
import io.turnstream.tools.ToolExecutorConfig;
import io.turnstream.tools.ToolExecutorService;
import io.turnstream.tools.ToolRegistry;
import io.turnstream.topology.TopologyConfig;
import io.turnstream.topology.UpsertTopology;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two gateways as separate JVMs in one group, on a real broker with the real topology and tool
 * executor, the provider simulated in this JVM. The owner of a turn is killed with SIGKILL while
 * the model streams and while the turn waits for a tool result, stopped with SIGTERM mid-turn, or
 * asked to cancel through the other gateway; the other gateway finishes the turn from what Kafka
 * holds: every tool call runs once, the items end as the provider sent them, seq stays contiguous.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@UsesBroker
@UsesProcesses
class GatewayTakeoverTest {

    private static final Duration SESSION_TIMEOUT = Duration.ofSeconds(6);
    private static final Duration TAKEOVER_BOUND = SESSION_TIMEOUT.plusSeconds(10);
    private static final Duration TIMEOUT = Duration.ofSeconds(90);
    private static final String FINAL_ANSWER = "The note is filed and the turn is complete.";
    /** Long enough to be killed in the middle of: about three seconds at the first call's pace. */
    private static final String STEP_ONE_TEXT = SimulatedText.words(120);

    @TempDir
    static Path dir;

    private static TestCluster cluster;
    private static StreamsService topology;
    private static ToolExecutorService tools;
    private static SimulatedAnthropicServer provider;
    private static CommittedReader rawEvents;
    private static CommittedReader deadLetters;
    private static Path gatewayConfig;
    private static final HttpClient http = HttpClient.newHttpClient();
    /** Call ids the tools ran for, per turn, in order: a call run twice shows up twice. */
    private static final Map<String, List<String>> toolRuns = new ConcurrentHashMap<>();
    /** Model calls per prompt, so a step called again after a takeover streams faster. */
    private static final Map<String, AtomicInteger> modelCalls = new ConcurrentHashMap<>();
    private static volatile CompletableFuture<Void> heldToolRelease = new CompletableFuture<>();

    private final List<Gateway> gateways = new CopyOnWriteArrayList<>();

    /** A gateway child process and the port its API listens on. */
    private record Gateway(TurnstreamProcess process, int port) {
        String url(String path) {
            return "http://127.0.0.1:" + port + path;
        }
    }

    @BeforeAll
    static void startPipeline() throws Exception {
        // a gateway killed mid-transaction is fenced by the next owner; this cleans up after the last one
        cluster = TestCluster.start(dir.resolve("broker"), 3,
                Map.of("transaction.abort.timed.out.transaction.cleanup.interval.ms", "1000"));
        Properties base = new Properties();
        base.setProperty("bootstrap.servers", cluster.bootstrapServers());
        Settings settings = Settings.of(base);
        Settings topologySettings = settings.with(TopologyConfig.STATE_DIR, dir.resolve("streams").toString())
                .with(TopologyConfig.APPLICATION_ID, "takeover-topology").with("commit.interval.ms", "50");
        TopologyConfig topologyConfig = TopologyConfig.from(topologySettings);
        topology = StreamsService.start(UpsertTopology.build(topologyConfig), topologyConfig.streamsProperties(),
                StreamsService.Options.from(topologySettings, -1));
        tools = new ToolExecutorService(settings
                .with(ToolExecutorConfig.WORKSPACE, Files.createDirectories(dir.resolve("workspace")).toString())
                .with(ToolExecutorConfig.PREFIX + "group-id", "takeover-tools")
                .with(ToolApprovals.PREFIX + "approved_note", "ask"),
                ToolRegistry.of(List.of(new RecordingTool("file_note", false), new RecordingTool("hold", true),
                        new RecordingTool("approved_note", false))))
                .start();
        provider = SimulatedAnthropicServer.start(0, GatewayTakeoverTest::script, 40);
        rawEvents = new CommittedReader(cluster.bootstrapServers(), Topics.DEFAULTS.rawEvents());
        deadLetters = new CommittedReader(cluster.bootstrapServers(), Topics.DEFAULTS.deadLetters());
        gatewayConfig = Files.writeString(dir.resolve("gateway.properties"), String.join("\n",
                "session.timeout.ms=" + SESSION_TIMEOUT.toMillis(),
                "heartbeat.interval.ms=1000",
                "transaction.timeout.ms=5000",
                "turnstream.gateway.retry.base-delay-ms=100",
                // the simulated Anthropic server's model has no price: allowed by name
                "turnstream.gateway.allowed-models=anthropic:sim-model",
                ""));
        await().atMost(TIMEOUT).until(topology::isRunning);
    }

    @AfterAll
    static void stopPipeline() {
        deadLetters.close();
        rawEvents.close();
        provider.close();
        tools.close();
        topology.close();
        cluster.close();
    }

    @BeforeEach
    void startTwoGateways() {
        heldToolRelease = new CompletableFuture<>();
        gateways.add(startGateway("gateway-a"));
        gateways.add(startGateway("gateway-b"));
        // both in the group with their share of the partitions: no rebalance during the turn
        gateways.forEach(gateway -> await().atMost(TIMEOUT)
                .until(() -> gateway.process().stderr().contains("owning " + Topics.DEFAULTS.turnRequests())));
    }

    @AfterEach
    void stopGateways() {
        gateways.forEach(gateway -> gateway.process().close());
    }

    /**
     * The provider: step one thinks, streams a long text and calls {@code file_note} (or
     * {@code hold} when the prompt says so); after the tool's result, a short final answer. A
     * step called again after a takeover streams at ten times the pace.
     */
    private static SimulatedReply script(SimulatedRequest request) {
        if (!request.lastToolResults().isEmpty()) {
            return SimulatedReply.answer().text(FINAL_ANSWER);
        }
        String prompt = request.lastUserText();
        int call = modelCalls.computeIfAbsent(prompt, p -> new AtomicInteger()).incrementAndGet();
        String tool = prompt.startsWith("hold") ? "hold" : prompt.startsWith("approve") ? "approved_note" : "file_note";
        return SimulatedReply.answer()
                .thinking("A note has to be filed first.")
                .text(STEP_ONE_TEXT)
                .toolUse(tool, Json.MAPPER.createObjectNode().put("note", prompt))
                .tokensPerSecond(call == 1 ? 40 : 400);
    }

    // ---- the scenarios ----

    @Test
    void ownerKilledWhileTheModelStreamsTheOtherGatewayTakesTheStepBackAndFinishes() throws Exception {
        Started turn = startTurn(gateways.get(0), "kill while streaming");
        Gateway owner = awaitOwner(turn);
        awaitEvents(turn, events -> textDeltasOf(events) >= 5);

        long killedAt = System.nanoTime();
        owner.process().kill();

        List<StreamPayload> events = awaitTerminal(turn, TAKEOVER_BOUND);
        reportTakeover("streaming", killedAt, turn);
        assertCompletedAsTheProviderSent(turn, events);
        assertThat(events).as("the step that was streaming is withdrawn")
                .anyMatch(p -> p instanceof StreamPayload.ItemWithdrawn);
        assertThat(other(owner).process().stderr()).contains("turn resumed at step 1: run " + turn.runId());
    }

    @Test
    void ownerKilledWhileWaitingForAToolResultTheOtherGatewayUsesTheResultWithoutRunningTheToolAgain()
            throws Exception {
        Started turn = startTurn(gateways.get(0), "hold the note while the gateway dies");
        Gateway owner = awaitOwner(turn);
        await().atMost(TIMEOUT).until(() -> toolRunsOf(turn).size() == 1);

        long killedAt = System.nanoTime();
        owner.process().kill();
        heldToolRelease.complete(null);

        List<StreamPayload> events = awaitTerminal(turn, TAKEOVER_BOUND);
        reportTakeover("waiting for a tool", killedAt, turn);
        assertCompletedAsTheProviderSent(turn, events);
        assertThat(events).as("nothing was withdrawn").noneMatch(p -> p instanceof StreamPayload.ItemWithdrawn);
        assertThat(other(owner).process().stderr()).contains("turn resumed at step 2: run " + turn.runId());
    }

    /**
     * A step's last events and its checkpoint commit in one transaction: as soon as a reader sees step one
     * complete (its {@code step_completed} status, sent with the checkpoint), the owner is killed; the other
     * gateway resumes after it, and the provider, which counts the calls of step one, is never asked again.
     */
    @Test
    void ownerKilledRightAfterAStepEndsNeverHasThatStepCalledAgain() throws Exception {
        String prompt = "hold on: the owner dies as step one ends";
        Started turn = startTurn(gateways.get(0), prompt);
        Gateway owner = awaitOwner(turn);
        await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(20)).until(() -> events(turn).stream()
                .anyMatch(p -> p instanceof StreamPayload.TurnStatus status
                        && status.status() == TurnActivity.STEP_COMPLETED));

        owner.process().kill();
        heldToolRelease.complete(null);

        List<StreamPayload> events = awaitTerminal(turn, TAKEOVER_BOUND.plus(TIMEOUT));
        assertCompletedAsTheProviderSent(turn, events);
        assertThat(modelCalls.get(prompt)).as("step one is never called again").hasValue(1);
        assertThat(events).as("nothing of the complete step is taken back")
                .noneMatch(p -> p instanceof StreamPayload.ItemWithdrawn);
        assertThat(other(owner).process().stderr()).contains("turn resumed at step 2: run " + turn.runId());
    }

    @Test
    void ownerStoppedWithSigtermHandsTheTurnOverAtAStepBoundaryAndNothingIsAborted() throws Exception {
        Started turn = startTurn(gateways.get(0), "drain mid turn");
        Gateway owner = awaitOwner(turn);
        awaitEvents(turn, events -> textDeltasOf(events) >= 5);

        int exitCode = owner.process().terminate();

        List<StreamPayload> events = awaitTerminal(turn, TIMEOUT);
        assertThat(exitCode).as("exit code after SIGTERM").isEqualTo(143);
        assertCompletedAsTheProviderSent(turn, events);
        assertThat(events).as("nothing aborted").noneMatch(p -> p instanceof StreamPayload.ItemCancelled
                || p instanceof StreamPayload.ItemWithdrawn || p instanceof StreamPayload.ItemError);
        assertThat(modelCalls.get("drain mid turn")).as("step one was called once").hasValue(1);
        assertThat(owner.process().stderr()).contains("handing over");
        assertThat(other(owner).process().stderr()).contains("turn resumed at step 2: run " + turn.runId());
    }

    @Test
    void ownerKilledWhileACallAwaitsApprovalTheOtherGatewayShowsItAwaitingAndTheDecisionRunsIt() throws Exception {
        Started turn = startTurn(gateways.get(0), "approve the note, then the gateway dies");
        Gateway owner = awaitOwner(turn);
        awaitEvents(turn, events -> toolStatuses(events, ToolState.AWAITING_APPROVAL) == 1);

        owner.process().kill();

        await().atMost(TAKEOVER_BOUND).until(() -> other(owner).process().stderr()
                .contains("turn resumed at step 2: run " + turn.runId()));
        awaitEvents(turn, events -> toolStatuses(events, ToolState.AWAITING_APPROVAL) == 2);
        String callId = events(turn).stream().filter(p -> p instanceof StreamPayload.ToolStatus)
                .map(p -> ((StreamPayload.ToolStatus) p).callId()).findFirst().orElseThrow();
        assertThat(toolRunsOf(turn)).as("not run before the decision").isEmpty();
        HttpResponse<String> decision = post(other(owner), "/v1/turns/" + turn.turnId() + "/tool-calls/" + callId
                + "/approval", "{\"approved\": true}");
        assertThat(decision.statusCode()).as(decision.body()).isEqualTo(202);
        assertCompletedAsTheProviderSent(turn, awaitTerminal(turn, TIMEOUT));
    }

    @Test
    void aDenialPostedWhileTheOwnerChangesEndsTheTurnWithoutCallingTheModelAgain() throws Exception {
        String prompt = "approve the note? no: deny it while the gateway dies";
        Started turn = startTurn(gateways.get(0), prompt);
        Gateway owner = awaitOwner(turn);
        awaitEvents(turn, events -> toolStatuses(events, ToolState.AWAITING_APPROVAL) == 1);
        String callId = events(turn).stream().filter(p -> p instanceof StreamPayload.ToolStatus)
                .map(p -> ((StreamPayload.ToolStatus) p).callId()).findFirst().orElseThrow();

        owner.process().kill();
        // before the other gateway has taken the turn over: it knows the ask, as every gateway does
        HttpResponse<String> decision = post(other(owner), "/v1/turns/" + turn.turnId() + "/tool-calls/" + callId
                + "/approval", "{\"approved\": false, \"reason\": \"not now\"}");
        assertThat(decision.statusCode()).as(decision.body()).isEqualTo(202);

        List<StreamPayload> events = awaitTerminal(turn, TAKEOVER_BOUND.plus(TIMEOUT));
        assertThat(other(owner).process().stderr()).contains("turn resumed at step 2: run " + turn.runId());
        assertThat(events.get(events.size() - 1)).isInstanceOfSatisfying(StreamPayload.ResponseDone.class,
                done -> assertThat(done.finishReason()).isEqualTo("tool_denied"));
        assertThat(modelCalls.get(prompt)).as("the model is not called after the denial").hasValue(1);
        assertThat(toolRunsOf(turn)).as("the denied call never ran").isEmpty();
        assertEveryStartedItemIsClosedOnceAndNothingFollows(events);
    }

    @Test
    void cancelSentToTheGatewayThatDoesNotRunTheTurnStopsIt() throws Exception {
        Started turn = startTurn(gateways.get(0), "cancel me from elsewhere");
        Gateway owner = awaitOwner(turn);
        awaitEvents(turn, events -> textDeltasOf(events) >= 2);

        HttpResponse<String> cancel = post(other(owner), "/v1/turns/" + turn.turnId() + "/cancel",
                "{\"reason\": \"stopped from the other gateway\"}");

        assertThat(cancel.statusCode()).as(cancel.body()).isEqualTo(202);
        List<StreamPayload> events = awaitTerminal(turn, TIMEOUT);
        assertThat(events.get(events.size() - 1)).isInstanceOfSatisfying(StreamPayload.ResponseDone.class,
                done -> assertThat(done.status()).isEqualTo(ResponseStatus.ABORTED));
        assertEveryStartedItemIsClosedOnceAndNothingFollows(events);
        assertThat(toolRunsOf(turn)).isEmpty();
    }

    // ---- what every finished turn must show ----

    /**
     * Completed; each tool call ran once; every item closed once and nothing published twice; every
     * done item holds what the provider sent; upserts with seq 1..n; no dead letter of the run.
     */
    private static void assertCompletedAsTheProviderSent(Started turn, List<StreamPayload> events) {
        assertThat(events.get(events.size() - 1)).isInstanceOfSatisfying(StreamPayload.ResponseDone.class,
                done -> assertThat(done.status()).isEqualTo(ResponseStatus.COMPLETE));
        List<String> callIds = events.stream()
                .filter(p -> p instanceof StreamPayload.ItemDone done && done.finalItem().knownType() == ItemType.FUNCTION_CALL)
                .map(p -> ((StreamPayload.ItemDone) p).finalItem().callId()).toList();
        assertThat(toolRunsOf(turn)).as("tool runs").containsExactlyInAnyOrderElementsOf(callIds);
        assertEveryStartedItemIsClosedOnceAndNothingFollows(events);
        assertFinalContentIsTheStreamedText(events);
        List<String> messages = events.stream()
                .filter(p -> p instanceof StreamPayload.ItemDone done && done.finalItem().knownType() == ItemType.MESSAGE
                        && Origins.AGENT.equals(done.finalItem().origin()))
                .map(p -> ((StreamPayload.ItemDone) p).finalItem().content()).toList();
        assertThat(messages).as("the agent's messages, as the provider sent them").containsExactly(STEP_ONE_TEXT,
                FINAL_ANSWER);
        List<UpsertEnvelope> upserts = cluster.upserts().awaitEnd(turn.turnId(), TIMEOUT);
        assertThat(upserts.stream().map(UpsertEnvelope::seq).toList()).as("seq of the turn's upserts")
                .containsExactlyElementsOf(LongStream.rangeClosed(1, upserts.size()).boxed().toList());
        assertThat(upserts.stream().filter(e -> e.payload() instanceof UIUpsert u && u.changeType() == ChangeType.COMPLETED
                && Origins.AGENT.equals(u.origin())).map(e -> ((UIUpsert) e.payload()).content()))
                .as("completed agent messages on llm.upserts").contains(STEP_ONE_TEXT, FINAL_ANSWER);
        assertThat(deadLetters.poll()).as("dead letters").noneMatch(r -> turn.runId().equals(r.key()));
        assertUsageCountedOnce(events);
    }

    /** The turn's usage is the sum of its completed steps', whichever gateway ran them: nothing counted twice. */
    private static void assertUsageCountedOnce(List<StreamPayload> events) {
        List<StreamPayload.Usage> steps = events.stream()
                .filter(p -> p instanceof StreamPayload.TurnStatus status && status.status() == TurnActivity.STEP_COMPLETED)
                .map(p -> ((StreamPayload.TurnStatus) p).usage()).toList();
        StreamPayload.Usage total = ((StreamPayload.ResponseDone) events.get(events.size() - 1)).usage();
        assertThat(steps).as("one step_completed per step").hasSize(2);
        assertThat(total.promptTokens()).isEqualTo(steps.stream().mapToLong(StreamPayload.Usage::promptTokens).sum());
        assertThat(total.completionTokens())
                .isEqualTo(steps.stream().mapToLong(StreamPayload.Usage::completionTokens).sum());
    }

    // ---- helpers ----

    private record Started(String turnId, String runId) {
    }

    private static Gateway startGateway(String name) {
        List<Integer> ports = FreePorts.take(2);
        int port = ports.get(0);
        int managementPort = ports.get(1);
        TurnstreamProcess process = TurnstreamProcess.start(name,
                Map.of("ANTHROPIC_BASE_URL", provider.baseUrl(), "ANTHROPIC_API_KEY", "test-key"),
                "gateway", "--bootstrap-servers", cluster.bootstrapServers(), "--port", String.valueOf(port),
                "--management-port", String.valueOf(managementPort), "--config", gatewayConfig.toString());
        process.awaitHealthy(managementPort);
        return new Gateway(process, port);
    }

    private static Started startTurn(Gateway gateway, String prompt) throws Exception {
        String body = Json.toString(Map.of("provider", "anthropic", "model", "sim-model", "prompt", prompt,
                "tools", List.of(Map.of("name", "file_note"), Map.of("name", "hold"), Map.of("name", "approved_note"))));
        HttpResponse<String> response = post(gateway, "/v1/turns", body);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(202);
        JsonNode json = Json.fromString(response.body(), JsonNode.class);
        return new Started(json.get("turnId").asText(), json.get("runId").asText());
    }

    /** The gateway whose log says it started the turn. */
    private Gateway awaitOwner(Started turn) {
        return await().atMost(TIMEOUT).until(() -> gateways.stream()
                .filter(g -> g.process().stderr().contains("turn started: run " + turn.runId())).findFirst().orElse(null),
                owner -> owner != null);
    }

    private Gateway other(Gateway gateway) {
        return gateways.stream().filter(g -> g != gateway).findFirst().orElseThrow();
    }

    private static List<StreamPayload> events(Started turn) {
        return rawEvents.poll().stream().filter(r -> turn.runId().equals(r.key()))
                .map(r -> Json.fromString(r.value(), StreamEvent.class).payload()).toList();
    }

    private static void awaitEvents(Started turn, Predicate<List<StreamPayload>> done) {
        await().atMost(TIMEOUT).until(() -> done.test(events(turn)));
    }

    private static List<StreamPayload> awaitTerminal(Started turn, Duration within) {
        return await().atMost(within).pollInterval(Duration.ofMillis(100)).until(() -> events(turn),
                events -> events.stream().anyMatch(p -> p instanceof StreamPayload.ResponseDone
                        || p instanceof StreamPayload.ResponseError));
    }

    private static long toolStatuses(List<StreamPayload> events, ToolState status) {
        return events.stream().filter(p -> p instanceof StreamPayload.ToolStatus tool && tool.status() == status)
                .count();
    }

    private static List<String> toolRunsOf(Started turn) {
        return toolRuns.getOrDefault(turn.turnId(), List.of());
    }

    /** Deltas of the agent's messages: the model is past its thinking and streams text. */
    private static long textDeltasOf(List<StreamPayload> events) {
        Set<String> messages = events.stream()
                .filter(p -> p instanceof StreamPayload.ItemStart start && start.knownItemType() == ItemType.MESSAGE)
                .map(p -> ((StreamPayload.ItemStart) p).itemId()).collect(Collectors.toSet());
        return events.stream().filter(p -> p instanceof StreamPayload.ItemDelta delta && messages.contains(delta.itemId()))
                .count();
    }

    /** Takeover time for docs/benchmarks.md: from the kill to the turn's end on the other gateway. */
    private static void reportTakeover(String when, long killedAt, Started turn) {
        System.out.printf("takeover while %s: turn %s completed %d ms after SIGKILL (session timeout %d ms)%n", when,
                turn.turnId(), (System.nanoTime() - killedAt) / 1_000_000, SESSION_TIMEOUT.toMillis());
    }

    private static HttpResponse<String> post(Gateway gateway, String path, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(gateway.url(path)))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Records every call it runs; {@code hold} answers only once the test releases it. */
    private record RecordingTool(String name, boolean holds) implements Tool {
        @Override
        public String description() {
            return "Files a note.";
        }

        @Override
        public JsonNode inputSchema() {
            return Json.fromString("{\"type\":\"object\",\"properties\":{\"note\":{\"type\":\"string\"}}}", JsonNode.class);
        }

        @Override
        public boolean concurrencySafe() {
            return true;
        }

        @Override
        public JsonNode execute(JsonNode arguments, ToolContext context) throws Exception {
            toolRuns.computeIfAbsent(context.turnId(), id -> new CopyOnWriteArrayList<>()).add(context.callId());
            if (holds) {
                heldToolRelease.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            }
            return TextNode.valueOf("filed: " + arguments.path("note").asText());
        }
    }
}
