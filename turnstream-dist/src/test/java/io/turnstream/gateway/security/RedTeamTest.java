package io.turnstream.gateway.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.deploy.ComposeFile;
import io.turnstream.gateway.Gateway;
import io.turnstream.gateway.GatewayConfig;
import io.turnstream.gateway.ProviderEndpoints;
import io.turnstream.gateway.loop.ApprovalDecisions;
import io.turnstream.gateway.loop.GatewayMetrics;
import io.turnstream.gateway.provider.ProviderEndpoint;
import io.turnstream.gateway.sim.SimulatedAnthropicServer;
import io.turnstream.gateway.sim.SimulatedReply;
import io.turnstream.gateway.sim.SimulatedRequest;
import io.turnstream.gateway.sim.SimulatedText;
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.gateway.view.TurnRecords;
import io.turnstream.gateway.view.TurnViewConfig;
import io.turnstream.model.ChangeType;
import io.turnstream.model.DeadLetterHeaders;
import io.turnstream.model.Json;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.ToolCall;
import io.turnstream.model.ToolResult;
import io.turnstream.model.Topics;
import io.turnstream.runtime.EmbeddedKafkaBroker;
import io.turnstream.runtime.HealthServer;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.StreamsService;
import io.turnstream.runtime.TenantClaims;
import io.turnstream.runtime.TopicAdmin;
import io.turnstream.runtime.TopologyInstance;
import io.turnstream.security.ClientFile;
import io.turnstream.security.PrincipalProbe;
import io.turnstream.security.ServiceAcls;
import io.turnstream.testsupport.UsesBroker;
import io.turnstream.tools.Tool;
import io.turnstream.tools.ToolContext;
import io.turnstream.tools.ToolErrors;
import io.turnstream.tools.ToolExecutorConfig;
import io.turnstream.tools.ToolExecutorService;
import io.turnstream.tools.ToolRegistry;
import io.turnstream.topology.TopologyConfig;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 21's "Why", replayed as a hostile tenant (or anyone who reaches the broker) would, one finding per
 * test; each fails if what its finding describes comes back. The setting is the deployment's, secured as
 * {@code broker --secure} secures it: a broker with SASL/SCRAM and the services' ACLs; the real topology, tool
 * executor and two gateway instances, each logged in as its own principal with the tenant claim key; API keys
 * per tenant; clients over HTTP on loopback. Where a finding needs records the topology would write (a turn that
 * sends megabytes, a turn that is "running"), the admin writes them; tool calls come from the topology's
 * principal, signed as the topology passes on the gateway's claim, or forged without it.
 */
@UsesBroker
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class RedTeamTest {

    private static final String KEY_A = "key-of-tenant-a-" + UUID.randomUUID();
    private static final String KEY_B = "key-of-tenant-b-" + UUID.randomUUID();
    private static final String KEY_C = "key-of-tenant-c-" + UUID.randomUUID();
    private static final String KEY_D = "key-of-tenant-d-" + UUID.randomUUID();
    private static final String KEY_E = "key-of-tenant-e-" + UUID.randomUUID();
    private static final String KEY_G = "key-of-tenant-g-" + UUID.randomUUID();
    private static final String KEY_BUDGETED = "key-of-budgeted-" + UUID.randomUUID();
    private static final String KEY_BUSY = "key-of-busy-" + UUID.randomUUID();
    /** Tenants that flood unknown turns, each within its burst of requests. */
    private static final int FLOOD_TENANTS = 10;
    private static final String FLOOD_KEY = "key-of-flooding-tenant-";
    private static final int MAX_OPEN_STREAMS = 20;
    private static final int REQUESTS_PER_SECOND = 50;
    private static final int MAX_QUEUED_PER_CLIENT = 4;
    private static final int MAX_STEPS_LIMIT = 25;
    /** Long enough that, were the wait a sleeping request thread, the flood below would hold the pool. */
    private static final Duration UNKNOWN_TURN_GRACE = Duration.ofSeconds(60);
    /** The executor's quotas, small enough for records of a test: per call, per file, per tenant's workspace. */
    private static final int MAX_WRITE_BYTES = 1024;
    private static final int MAX_FILE_BYTES = 2048;
    private static final int TENANT_QUOTA_BYTES = 4096;
    private static final int TENANT_MAX_IN_FLIGHT = 2;
    private static final Duration KAFKA_WAIT = Duration.ofSeconds(90);
    private static final Topics T = Topics.DEFAULTS;

    private static Path dir;
    private static Path credentials;
    private static EmbeddedKafkaBroker broker;
    private static StreamsService topology;
    private static ToolExecutorService executor;
    private static SimulatedAnthropicServer provider;
    private static Gateway gateway;
    private static Gateway otherGateway;
    /** The operator: writes what the topology would, and reads what the services wrote. */
    private static KafkaProducer<String, String> asAdmin;
    /** A principal allowed to write llm.tool-calls (the topology's), without the claim key unless a call is signed. */
    private static KafkaProducer<String, byte[]> asTopology;
    private static TenantClaims claimKey;
    private static final HeldTool held = new HeldTool();
    private static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(30)).build();

    @BeforeAll
    static void startTheSecuredDeployment() throws Exception {
        dir = Files.createTempDirectory("red-team");
        Path data = dir.resolve("kafka");
        broker = new EmbeddedKafkaBroker(0, data)
                .secured(ServiceAcls.of(Settings.of(new Properties())).brokerSecurity(data)).start();
        credentials = broker.security().credentialsDir();
        TopicAdmin.createAll(broker.adminProperties(), T, 3, (short) 1);
        claimKey = TenantClaims.withKey(Files.readString(credentials.resolve("tenant-claim.key")).strip(), "the red team");

        topology = TopologyInstance.start(TopologyInstance.settings(broker.bootstrapServers(),
                TopologyConfig.DEFAULT_APPLICATION_ID, dir.resolve("topology-state"), asMap(clientFile("topology"))));

        Properties executorSettings = clientFile("tool-executor");
        executorSettings.put(ToolExecutorConfig.WORKSPACE, Files.createDirectories(dir.resolve("workspace")).toString());
        executorSettings.put(ToolExecutorConfig.PREFIX + "max-write-bytes", String.valueOf(MAX_WRITE_BYTES));
        executorSettings.put(ToolExecutorConfig.PREFIX + "max-file-bytes", String.valueOf(MAX_FILE_BYTES));
        executorSettings.put(ToolExecutorConfig.PREFIX + "tenant-quota-bytes", String.valueOf(TENANT_QUOTA_BYTES));
        executorSettings.put(ToolExecutorConfig.PREFIX + "tenant-max-in-flight", String.valueOf(TENANT_MAX_IN_FLIGHT));
        executor = new ToolExecutorService(Settings.of(executorSettings), ToolRegistry.installed().plus(held)).start();

        provider = SimulatedAnthropicServer.start(0, RedTeamTest::script, 0);
        StringBuilder keys = new StringBuilder("tenant-a:" + KEY_A + "\ntenant-b:" + KEY_B + "\ntenant-c:" + KEY_C
                + "\ntenant-d:" + KEY_D + "\ntenant-e:" + KEY_E + "\ntenant-g:" + KEY_G + "\nbudgeted:" + KEY_BUDGETED + "\nbusy:" + KEY_BUSY + "\n");
        for (int i = 0; i < FLOOD_TENANTS; i++) {
            keys.append("flood-").append(i).append(':').append(FLOOD_KEY).append(i).append('\n');
        }
        Path keysFile = Files.writeString(dir.resolve("api-keys"), keys);
        gateway = startGateway(keysFile);
        otherGateway = startGateway(keysFile);

        Properties admin = broker.adminProperties();
        asAdmin = new KafkaProducer<>(admin, new StringSerializer(), new StringSerializer());
        asTopology = new KafkaProducer<>(clientFile("topology"), new StringSerializer(), new ByteArraySerializer());
    }

    /** A gateway instance as the gateway's principal; every instance enforces the same limits. */
    private static Gateway startGateway(Path keysFile) throws Exception {
        Properties settings = clientFile("gateway");
        settings.put("turnstream.gateway.port", "0");
        settings.put(SecurityConfig.API_KEYS_FILE, keysFile.toString());
        settings.put(SecurityConfig.PREFIX + "unknown-turn-grace-ms", String.valueOf(UNKNOWN_TURN_GRACE.toMillis()));
        settings.put(SecurityConfig.PREFIX + "tenant.max-open-streams", String.valueOf(MAX_OPEN_STREAMS));
        settings.put(SecurityConfig.PREFIX + "tenant.max-requests-per-second", String.valueOf(REQUESTS_PER_SECOND));
        settings.put(SecurityConfig.PREFIX + "max-steps-limit", String.valueOf(MAX_STEPS_LIMIT));
        settings.put(SecurityConfig.PREFIX + "tenant.max-concurrent-turns", "1");
        settings.put(SecurityConfig.PREFIX + "tenant.budgeted.max-tokens-per-day", "1");
        settings.put(TurnViewConfig.PREFIX + "max-queued-per-client", String.valueOf(MAX_QUEUED_PER_CLIENT));
        // the operator's Anthropic endpoint (here the simulated server, which needs no key) and the simulated provider,
        // the default for turns that name none
        ProviderEndpoints providers = new ProviderEndpoints(new ProviderEndpoint(provider.baseUrl(), null), null,
                provider.baseUrl());
        Gateway started = Gateway.start(Settings.of(settings), providers, List.of());
        started.views().loaded().get();
        return started;
    }

    @AfterAll
    static void stopEverything() throws Exception {
        held.releaseAll();
        for (AutoCloseable part : new AutoCloseable[] {asTopology, asAdmin, otherGateway, gateway, provider, executor,
                topology, broker}) {
            if (part != null) {
                part.close();
            }
        }
    }

    /** "slow:" prompts stream for a while (about 12 s) and end by themselves; anything else is a short answer. */
    private static SimulatedReply script(SimulatedRequest request) {
        return request.firstUserText().startsWith("slow:")
                ? SimulatedReply.answer().text(SimulatedText.words(600)).tokensPerSecond(50)
                : SimulatedReply.answer().text("A short answer.");
    }

    /** "tenant C posts to /api/chat with the same id: B's resume then answers 204". */
    @Test
    void anotherTenantOnTheSameChatIdDoesNotTakeOverTheResume() throws Exception {
        TurnRecords ofB = newTurn("chat-42", "tenant-b");
        ofB.started();
        await().until(() -> gateway.views().runningTurnOf("chat-42", "tenant-b").isPresent());
        TurnRecords ofC = newTurn("chat-42", "tenant-c");
        ofC.started();
        await().until(() -> gateway.views().runningTurnOf("chat-42", "tenant-c").isPresent());

        HttpResponse<InputStream> resumeOfB = http.send(get("/api/chat/chat-42/stream", KEY_B),
                HttpResponse.BodyHandlers.ofInputStream());
        resumeOfB.body().close();

        assertThat(resumeOfB.statusCode()).isEqualTo(200);
        assertThat(gateway.views().runningTurnOf("chat-42", "tenant-b")).hasValue(ofB.id);
    }

    /** "Ids may be 200,000 characters long and are copied into every upsert". */
    @Test
    void longOrStrangeIdsAre400() throws Exception {
        HttpResponse<String> longChat = http.send(post("/api/chat", KEY_B, "{\"id\": \"" + "c".repeat(200_000 - 100)
                + "\", \"trigger\": \"submit-message\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}"),
                HttpResponse.BodyHandlers.ofString());
        HttpResponse<String> slashedThread = http.send(post("/v1/turns", KEY_B,
                "{\"prompt\": \"hi\", \"threadId\": \"tenant-c/chat-42\"}"), HttpResponse.BodyHandlers.ofString());

        assertThat(longChat.statusCode()).isIn(400, 413);
        assertThat(slashedThread.statusCode()).isEqualTo(400);
        assertThat(slashedThread.body()).contains("1 to 128 letters, digits");
    }

    /** "The wait for an unknown turn sleeps on a Jetty request thread" (so a flood held the pool). */
    @Test
    void aFloodOfUnknownTurnRequestsHoldsNoRequestThread() throws Exception {
        List<CompletableFuture<HttpResponse<String>>> flood = new ArrayList<>();
        HttpClient floodClient = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(30)).build();
        for (int i = 0; i < 300; i++) {
            flood.add(floodClient.sendAsync(get("/v1/turns/turn-unknown-" + i, FLOOD_KEY + i % FLOOD_TENANTS),
                    HttpResponse.BodyHandlers.ofString()));
        }

        HttpResponse<String> otherTenant = http.send(post("/v1/turns", KEY_B, "{\"prompt\": \"hello\"}"),
                HttpResponse.BodyHandlers.ofString());

        assertThat(otherTenant.statusCode()).isEqualTo(202);
        assertThat(flood).as("answered while every request of the flood still waits for its turn")
                .noneMatch(CompletableFuture::isDone);
        flood.forEach(request -> request.cancel(true));
    }

    /** "there is no cap on a tenant's open SSE connections". */
    @Test
    void aTenantsOpenStreamsAreCapped() throws Exception {
        TurnRecords turn = newTurn("thread-" + UUID.randomUUID(), "tenant-c");
        turn.started();
        turn.message("m1", "Hello", ChangeType.CREATED);
        await().until(() -> gateway.views().snapshot(turn.id, null).isPresent());
        List<HttpResponse<InputStream>> open = new ArrayList<>();
        try {
            for (int i = 0; i < MAX_OPEN_STREAMS; i++) {
                open.add(http.send(get("/v1/turns/" + turn.id + "/events", KEY_C), HttpResponse.BodyHandlers.ofInputStream()));
            }
            HttpResponse<String> oneMore = http.send(get("/v1/turns/" + turn.id + "/events", KEY_C),
                    HttpResponse.BodyHandlers.ofString());

            assertThat(open).extracting(HttpResponse::statusCode).containsOnly(200);
            assertThat(oneMore.statusCode()).isEqualTo(429);
            assertThat(oneMore.headers().firstValue("Retry-After")).isPresent();
            assertThat(oneMore.body()).contains("max-open-streams");
        } finally {
            turn.completed();
            for (HttpResponse<InputStream> stream : open) {
                stream.body().close();
            }
        }
    }

    /**
     * "a few clients that stop reading can hold [the sender threads] and delay every other tenant's stream":
     * twenty clients of tenant A stop reading a turn that sends megabytes. Each falls behind and is closed
     * with a final event saying so, while tenant B's stream delivers its whole turn and ends.
     */
    @Test
    void clientsThatStopReadingDoNotDelayAnotherTenantsStream() throws Exception {
        TurnRecords ofA = newTurn("thread-" + UUID.randomUUID(), "tenant-a");
        TurnRecords ofB = newTurn("thread-" + UUID.randomUUID(), "tenant-b");
        ofA.started();
        ofB.started();
        await().until(() -> gateway.views().snapshot(ofA.id, null).isPresent()
                && gateway.views().snapshot(ofB.id, null).isPresent());
        long fellBehindBefore = gateway.metrics().get(GatewayMetrics.Counter.SSE_STREAMS_FELL_BEHIND);
        CompletableFuture<HttpResponse<String>> streamOfB = http.sendAsync(get("/v1/turns/" + ofB.id + "/events", KEY_B),
                HttpResponse.BodyHandlers.ofString());
        List<StalledSseClient> stalled = new ArrayList<>();
        ExecutorService readers = Executors.newFixedThreadPool(MAX_OPEN_STREAMS);
        try {
            for (int i = 0; i < MAX_OPEN_STREAMS; i++) {
                stalled.add(StalledSseClient.get(gateway.port(), "/v1/turns/" + ofA.id + "/events", KEY_A));
            }
            // megabytes for each client: far more than its socket buffers and its queue hold
            String block = "x".repeat(48 * 1024);
            for (int i = 0; i < 64; i++) {
                ofA.message("a" + i, block, ChangeType.COMPLETED);
            }
            await().atMost(Duration.ofMinutes(2)).until(() -> gateway.metrics()
                    .get(GatewayMetrics.Counter.SSE_STREAMS_FELL_BEHIND) - fellBehindBefore == MAX_OPEN_STREAMS);
            // they read again at once, together: a client that fell behind and then idles past Jetty's idle timeout
            // (30 s) is closed without its final event, which is not what this finding is about
            List<CompletableFuture<String>> responses = stalled.stream()
                    .map(client -> CompletableFuture.supplyAsync(client::readResponseUnchecked, readers)).toList();

            ofB.message("b1", "Hello from B", ChangeType.CREATED);
            ofB.message("b1", "Hello from B, done", ChangeType.COMPLETED);
            ofB.completed();
            HttpResponse<String> ofBStream = streamOfB.get();

            assertThat(ofBStream.statusCode()).isEqualTo(200);
            assertThat(ofBStream.body()).contains("Hello from B, done").contains("turn_completed");
            for (CompletableFuture<String> response : responses) {
                assertThat(response.get()).startsWith("HTTP/1.1 200").endsWith("event: error\ndata: {\"error\":"
                        + "\"this stream fell more than " + MAX_QUEUED_PER_CLIENT + " events behind and is closed;"
                        + " reconnect with Last-Event-ID to resume\"}\n\n");
            }
        } finally {
            ofA.completed();
            for (StalledSseClient client : stalled) {
                client.close();
            }
            readers.shutdownNow();
        }
    }

    /**
     * The asynchronous wait for an unknown turn and the non-blocking stream together: a stream asked for
     * before its turn is known (the turn is accepted by another instance, say) streams once the turn appears.
     */
    @Test
    void aStreamAskedForBeforeItsTurnIsKnownStreamsOnceItAppears() throws Exception {
        TurnRecords turn = newTurn("thread-" + UUID.randomUUID(), "tenant-b");
        CompletableFuture<HttpResponse<String>> stream = http.sendAsync(get("/v1/turns/" + turn.id + "/events", KEY_B),
                HttpResponse.BodyHandlers.ofString());
        // the stream's request went out first; one more answered request makes it all but certain it waits now
        assertThat(http.send(post("/v1/turns", KEY_B, "{}"), HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(400);

        turn.started();
        turn.message("m1", "Hello", ChangeType.COMPLETED);
        turn.completed();

        assertThat(stream.get().statusCode()).isEqualTo(200);
        assertThat(stream.get().body()).contains("\"content\":\"Hello\"", "turn_completed");
    }

    /** "there is no cap on a tenant's ... request rate": 429 with Retry-After, and another tenant is served meanwhile. */
    @Test
    void aTenantOverItsRequestRateGets429WhileAnotherIsServed() throws Exception {
        List<CompletableFuture<HttpResponse<String>>> burst = new ArrayList<>();
        for (int i = 0; i < REQUESTS_PER_SECOND * 8; i++) {
            burst.add(http.sendAsync(post("/v1/turns", KEY_D, "{\"unknownField\": true}"), HttpResponse.BodyHandlers.ofString()));
        }
        HttpResponse<String> ofE = http.send(post("/v1/turns", KEY_E, "{\"prompt\": \"hello\"}"),
                HttpResponse.BodyHandlers.ofString());
        List<HttpResponse<String>> answers = burst.stream().map(CompletableFuture::join).toList();

        assertThat(ofE.statusCode()).isEqualTo(202);
        assertThat(answers).filteredOn(response -> response.statusCode() == 429).isNotEmpty().allSatisfy(response -> {
            assertThat(response.headers().firstValue("Retry-After")).hasValue("1");
            assertThat(response.body()).contains("max-requests-per-second");
        });
        assertThat(answers).as("what the rate let through reached the route, which refused the body")
                .filteredOn(response -> response.statusCode() != 429).isNotEmpty()
                .allSatisfy(response -> assertThat(response.statusCode()).isEqualTo(400));
    }

    /** "a client picks ... maxSteps up to 100 on the operator's provider keys". */
    @Test
    void maxStepsOverTheOperatorsLimitIs400() throws Exception {
        HttpResponse<String> tooMany = http.send(post("/v1/turns", KEY_B, "{\"prompt\": \"hi\", \"maxSteps\": "
                + (MAX_STEPS_LIMIT + 1) + "}"), HttpResponse.BodyHandlers.ofString());

        assertThat(tooMany.statusCode()).isEqualTo(400);
        assertThat(tooMany.body()).contains("max-steps-limit");
    }

    /**
     * "The management port follows the API's host ...; the topology's health endpoint binds 0.0.0.0 by
     * default. Connect sink rows carry no tenant."
     */
    @Test
    void managementAndHealthPortsStayOnLoopbackAndSinkRowsCarryTheTenant() throws Exception {
        Settings publicApi = Settings.of(new Properties()).with(GatewayConfig.PREFIX + "host", "0.0.0.0");

        assertThat(GatewayConfig.from(publicApi).managementHost()).isEqualTo("127.0.0.1");
        assertThat(HealthServer.host(Settings.of(new Properties()))).isEqualTo("127.0.0.1");
        assertThat(Files.readString(Path.of("..", "connectors", "item-state-table.sql"))).contains("tenant_id ");
    }

    /** "unknown call ids push other tenants' pending approvals out of a 10,000-entry map". */
    @Test
    void unknownCallIdsDoNotEvictAPendingApproval() {
        ApprovalDecisions approvals = new ApprovalDecisions();
        approvals.asked("turn-of-tenant-b", "call-1", "write_file");
        for (int i = 0; i < 20_000; i++) {
            approvals.round("turn-of-tenant-c", "call-" + i);
        }
        approvals.decided("turn-of-tenant-b", "call-1", false, "no");

        assertThat(approvals.round("turn-of-tenant-b", "call-1").decision).isCompleted();
    }

    // ---- "Kafka itself is open" ----

    /** "docker-compose publishes the broker's PLAINTEXT listener on every interface". */
    @Test
    void composePublishesNoBrokerPortAndRunsTheBrokerSecured() {
        ComposeFile compose = ComposeFile.read();

        assertThat(compose.ports("kafka")).isEmpty();
        assertThat(compose.command("kafka")).startsWith("broker", "--secure");
    }

    /** "no service uses SASL or ACLs ... Anyone who reaches the broker reads every tenant's conversations from llm.item-state". */
    @Test
    void whoeverReachesTheBrokerWithoutAPasswordReadsNothing() {
        assertThatThrownBy(() -> {
            try (Admin anonymous = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
                    AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 5000, AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5000))) {
                anonymous.listTopics().names().get(30, TimeUnit.SECONDS);
            }
        }).isNotNull();
        assertThat(PrincipalProbe.using(credentials.resolve("tool-executor.properties")).read(T.itemState()))
                .as("even a service's principal reads conversations only if its service needs them").isFalse();
    }

    /** "... and writes tool calls into any tenant's workspace": the gateway's principal may not write llm.tool-calls at all. */
    @Test
    void theGatewaysPrincipalCannotWriteToolCalls() {
        assertThat(PrincipalProbe.using(credentials.resolve("gateway.properties")).write(T.toolCalls())).isFalse();
    }

    /** "the topology trusts response_start.tenant_id": a turn claiming tenant B, written without the gateway's claim. */
    @Test
    void aResponseStartThatClaimsATenantWithoutTheGatewaysSignatureStartsNoTurn() throws Exception {
        String runId = "run-" + UUID.randomUUID();
        String turnId = "turn-" + UUID.randomUUID();
        StreamEvent forged = StreamEvent.of(runId + "-0", System.currentTimeMillis(), runId,
                new StreamPayload.ResponseStart("resp-" + runId, turnId, "thread-1", null, "sim-model", "simulated", 0, "tenant-b"));
        try (KafkaProducer<String, byte[]> asGateway = new KafkaProducer<>(clientFile("gateway"), new StringSerializer(),
                new ByteArraySerializer())) {
            asGateway.send(new ProducerRecord<>(T.rawEvents(), runId, Json.toBytes(forged))).get(60, TimeUnit.SECONDS);
        }

        ConsumerRecord<String, byte[]> refused = awaitRecord(T.deadLetters(), record -> runId.equals(record.key()));
        assertThat(header(refused.headers(), DeadLetterHeaders.REASON)).startsWith("response_start not trusted: no "
                + TenantClaims.HEADER + " header");
        assertThat(gateway.views().snapshot(turnId, null)).as("no turn started").isEmpty();
    }

    /** "the tool executor trusts the tenantId it reads": a call into tenant B's workspace, without the claim. */
    @Test
    void aToolCallIntoAnotherTenantsWorkspaceWithoutTheClaimIsDeadLetteredAndNotRun() throws Exception {
        ToolCall forged = toolCall("tenant-b", "write_file", "{\"path\": \"planted.txt\", \"content\": \"gotcha\"}");
        asTopology.send(new ProducerRecord<>(T.toolCalls(), null, forged.turnId(), Json.toBytes(forged), new RecordHeaders()))
                .get(60, TimeUnit.SECONDS);

        ConsumerRecord<String, byte[]> refused = awaitRecord(ToolExecutorConfig.deadLetterTopic(Settings.of(new Properties())),
                record -> new String(record.value(), StandardCharsets.UTF_8).contains(forged.callId()));
        assertThat(header(refused.headers(), DeadLetterHeaders.REASON)).startsWith("ToolCall's tenant not trusted");
        assertThat(dir.resolve("workspace").resolve("tenants").resolve("tenant-b").resolve("planted.txt")).doesNotExist();
    }

    // ---- "The tool sandbox has no quotas" ----

    /** "write_file has no size limit": over the per-call limit, QUOTA_EXCEEDED and nothing written. */
    @Test
    void aWriteOverThePerCallLimitIsQuotaExceeded() {
        ToolResult result = run(toolCall("tenant-q1", "write_file", "{\"path\": \"huge.txt\", \"content\": \""
                + "x".repeat(MAX_WRITE_BYTES + 1) + "\"}"));

        assertThat(result.error().code()).isEqualTo(ToolErrors.QUOTA_EXCEEDED);
        assertThat(workspaceOf("tenant-q1").resolve("huge.txt")).doesNotExist();
    }

    /** "edit_file with replace_all can multiply a file": the file's size after the edit is capped. */
    @Test
    void anEditThatMultipliesAFileIsQuotaExceeded() throws Exception {
        String content = "ab".repeat(MAX_WRITE_BYTES / 2 - 8);
        assertThat(run(toolCall("tenant-q2", "write_file", "{\"path\": \"f.txt\", \"content\": \"" + content + "\"}")).success())
                .isTrue();

        ToolResult multiplied = run(toolCall("tenant-q2", "edit_file",
                "{\"path\": \"f.txt\", \"old_string\": \"a\", \"new_string\": \"aaaa\", \"replace_all\": true}"));

        assertThat(multiplied.error().code()).isEqualTo(ToolErrors.QUOTA_EXCEEDED);
        assertThat(Files.readString(workspaceOf("tenant-q2").resolve("f.txt"))).isEqualTo(content);
    }

    /** "no per-tenant disk quota": a tenant's workspace holds at most its quota, in files each within the limits. */
    @Test
    void aTenantsWorkspaceHoldsAtMostItsQuota() {
        String block = "y".repeat(MAX_WRITE_BYTES - 24);
        List<ToolResult> writes = new ArrayList<>();
        for (int i = 0; i < TENANT_QUOTA_BYTES / block.length() + 1; i++) {
            writes.add(run(toolCall("tenant-q3", "write_file", "{\"path\": \"part-" + i + ".txt\", \"content\": \"" + block + "\"}")));
        }

        assertThat(writes.subList(0, TENANT_QUOTA_BYTES / block.length())).allMatch(ToolResult::success);
        assertThat(writes.get(writes.size() - 1).error().code()).isEqualTo(ToolErrors.QUOTA_EXCEEDED);
        assertThat(run(toolCall("tenant-q4", "write_file", "{\"path\": \"mine.txt\", \"content\": \"" + block + "\"}")).success())
                .as("another tenant's quota is its own").isTrue();
    }

    /**
     * "one tenant can hold all 100 in-flight slots": tenant A's calls hold its share of the executor's slots; one
     * more is refused at once, and tenant B's call runs and is answered while A's still hold theirs.
     */
    @Test
    void oneTenantCannotHoldEveryInFlightSlotWhileAnotherTenantsCallWaits() {
        List<ToolCall> ofA = new ArrayList<>();
        for (int i = 0; i < TENANT_MAX_IN_FLIGHT; i++) {
            ofA.add(toolCall("tenant-f1", HeldTool.NAME, "{}"));
        }
        ofA.forEach(RedTeamTest::send);
        await().atMost(KAFKA_WAIT).until(() -> held.holding("tenant-f1") == TENANT_MAX_IN_FLIGHT);
        try {
            ToolResult oneMore = run(toolCall("tenant-f1", "list_files", "{}"));
            ToolResult ofB = run(toolCall("tenant-f2", "list_files", "{}"));

            assertThat(oneMore.error().code()).isEqualTo(ToolErrors.QUOTA_EXCEEDED);
            assertThat(oneMore.error().message()).contains("tenant-max-in-flight");
            assertThat(ofB.success()).as("tenant B's call ran while tenant A held its share").isTrue();
            assertThat(held.holding("tenant-f1")).isEqualTo(TENANT_MAX_IN_FLIGHT);
        } finally {
            held.releaseAll();
        }
        assertThat(ofA).allSatisfy(call -> assertThat(awaitResult(call).success()).isTrue());
    }

    /** "The executor keys approvals and its ledger by call id alone": two turns that use one call id both run. */
    @Test
    void aCallIdAnotherTurnUsesIsAnsweredForEachTurn() {
        ToolCall first = toolCall("tenant-l1", "write_file", "{\"path\": \"one.txt\", \"content\": \"1\"}");
        ToolCall second = new ToolCall(first.callId(), "turn-" + UUID.randomUUID(), "thread-1", "run-" + UUID.randomUUID(),
                "item-2", "write_file", Json.parseOrText("{\"path\": \"two.txt\", \"content\": \"2\"}"),
                System.currentTimeMillis(), "tenant-l2");

        assertThat(run(first).success()).isTrue();
        assertThat(run(second).success()).as("not taken for the first turn's call, already answered").isTrue();
        assertThat(workspaceOf("tenant-l2").resolve("two.txt")).hasContent("2");
    }

    // ---- "No spend control" ----

    /** "a client picks any model ... on the operator's provider keys". */
    @Test
    void aModelTheOperatorDidNotConfigureIs403() throws Exception {
        HttpResponse<String> anyModel = http.send(post("/v1/turns", KEY_G,
                "{\"prompt\": \"hi\", \"provider\": \"anthropic\", \"model\": \"claude-unpriced-giant\"}"),
                HttpResponse.BodyHandlers.ofString());

        assertThat(anyModel.statusCode()).as(anyModel.body()).isEqualTo(403);
        assertThat(anyModel.body()).contains("tenant tenant-g may not use model 'claude-unpriced-giant' of provider 'anthropic'");
    }

    /** "there is no token or cost budget": spent through one gateway, refused by the other (from Kafka's usage). */
    @Test
    void aDailyBudgetSpentThroughOneGatewayIsRefusedByTheOther() throws Exception {
        HttpResponse<String> spend = http.send(post("/v1/turns", KEY_BUDGETED, "{\"prompt\": \"spend it\"}"),
                HttpResponse.BodyHandlers.ofString());
        assertThat(spend.statusCode()).as(spend.body()).isEqualTo(202);
        String turnId = Json.parseOrText(spend.body()).get("turnId").asText();
        await().atMost(KAFKA_WAIT).until(() -> otherGateway.views().snapshot(turnId, null)
                .map(snapshot -> snapshot.status() == TurnPhase.COMPLETE).orElse(false));
        await("the other gateway counts the usage and the end").atMost(KAFKA_WAIT)
                .until(() -> otherGateway.tenantUsage().today("budgeted").tokens() > 0
                        && otherGateway.tenantUsage().running("budgeted") == 0);

        HttpResponse<String> more = http.send(post(otherGateway, "/v1/turns", KEY_BUDGETED, "{\"prompt\": \"more\"}"),
                HttpResponse.BodyHandlers.ofString());

        assertThat(more.statusCode()).isEqualTo(429);
        assertThat(more.body()).contains("its daily token budget of 1");
        assertThat(more.headers().firstValue("Retry-After")).isPresent();
    }

    /** "turn limits count per instance (N gateways allow N times)". */
    @Test
    void aConcurrentTurnLimitHoldsAcrossGatewayInstances() throws Exception {
        HttpResponse<String> running = http.send(post("/v1/turns", KEY_BUSY, "{\"prompt\": \"slow: hold the only slot\"}"),
                HttpResponse.BodyHandlers.ofString());
        assertThat(running.statusCode()).as(running.body()).isEqualTo(202);
        await("the other gateway reads the turn request").atMost(KAFKA_WAIT)
                .until(() -> otherGateway.tenantUsage().running("busy") == 1);

        HttpResponse<String> second = http.send(post(otherGateway, "/v1/turns", KEY_BUSY, "{\"prompt\": \"one too many\"}"),
                HttpResponse.BodyHandlers.ofString());

        assertThat(second.statusCode()).isEqualTo(429);
        assertThat(second.body()).contains("across all gateway instances");
    }

    // ---- helpers ----

    private static TurnRecords newTurn(String threadId, String tenantId) {
        return new TurnRecords(asAdmin, threadId, tenantId);
    }

    private static Properties clientFile(String principal) {
        return ClientFile.load(credentials.resolve(principal + ".properties"));
    }

    private static Map<String, String> asMap(Properties properties) {
        Map<String, String> map = new LinkedHashMap<>();
        properties.stringPropertyNames().forEach(key -> map.put(key, properties.getProperty(key)));
        return map;
    }

    private static Path workspaceOf(String tenant) {
        return dir.resolve("workspace").resolve("tenants").resolve(tenant);
    }

    /** A tool call of a new turn of {@code tenant}, as the topology would write it. */
    private static ToolCall toolCall(String tenant, String tool, String arguments) {
        String turnId = "turn-" + UUID.randomUUID();
        return new ToolCall("call-1", turnId, "thread-1", "run-" + turnId, "item-1", tool, Json.parseOrText(arguments),
                System.currentTimeMillis(), tenant);
    }

    /** Writes the call as the topology passes it on: with the claim the gateway signed for its tenant and run. */
    private static void send(ToolCall call) {
        Headers headers = new RecordHeaders();
        claimKey.addTo(headers, call.tenantId(), call.runId());
        try {
            asTopology.send(new ProducerRecord<>(T.toolCalls(), null, call.turnId(), Json.toBytes(call), headers))
                    .get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("cannot write the tool call", e);
        }
    }

    /** Sends a signed call and waits for its one result. */
    private static ToolResult run(ToolCall call) {
        send(call);
        return awaitResult(call);
    }

    private static ToolResult awaitResult(ToolCall call) {
        ConsumerRecord<String, byte[]> answer = awaitRecord(T.toolResults(), record -> {
            ToolResult result = Json.fromString(new String(record.value(), StandardCharsets.UTF_8), ToolResult.class);
            return result.turnId().equals(call.turnId()) && result.callId().equals(call.callId());
        });
        return Json.fromString(new String(answer.value(), StandardCharsets.UTF_8), ToolResult.class);
    }

    /** The first committed record of {@code topic} (read from the start, as the admin) that {@code wanted} accepts. */
    private static ConsumerRecord<String, byte[]> awaitRecord(String topic, Predicate<ConsumerRecord<String, byte[]>> wanted) {
        Properties settings = broker.adminProperties();
        settings.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(settings, new StringDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                    .map(info -> new TopicPartition(topic, info.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            List<ConsumerRecord<String, byte[]>> found = new ArrayList<>();
            await().atMost(KAFKA_WAIT).until(() -> {
                consumer.poll(Duration.ofMillis(200)).forEach(record -> {
                    if (wanted.test(record)) {
                        found.add(record);
                    }
                });
                return !found.isEmpty();
            });
            return found.get(0);
        }
    }

    private static String header(Headers headers, String name) {
        Header header = headers.lastHeader(name);
        return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }

    /** A tool whose calls wait until the test releases them: what holds an executor's in-flight slots. */
    private static final class HeldTool implements Tool {
        static final String NAME = "hold";
        private final List<String> holding = new CopyOnWriteArrayList<>();
        private volatile CountDownLatch release = new CountDownLatch(1);

        int holding(String tenant) {
            return (int) holding.stream().filter(tenant::equals).count();
        }

        void releaseAll() {
            release.countDown();
        }

        @Override
        public String name() {
            return NAME;
        }

        @Override
        public String description() {
            return "Waits until the test releases it.";
        }

        @Override
        public JsonNode inputSchema() {
            return Json.parseOrText("{\"type\": \"object\"}");
        }

        @Override
        public boolean concurrencySafe() {
            return true;
        }

        @Override
        public JsonNode execute(JsonNode arguments, ToolContext context) throws Exception {
            String tenant = context.workspace().root().getFileName().toString();
            holding.add(tenant);
            try {
                release.await();
            } finally {
                holding.remove(tenant);
            }
            return Json.MAPPER.getNodeFactory().textNode("released");
        }
    }

    private static HttpRequest get(String path, String key) {
        return HttpRequest.newBuilder(URI.create(gateway.baseUrl() + path))
                .header("Authorization", "Bearer " + key).timeout(Duration.ofSeconds(120)).build();
    }

    private static HttpRequest post(String path, String key, String body) {
        return post(gateway, path, key, body);
    }

    private static HttpRequest post(Gateway to, String path, String key, String body) {
        return HttpRequest.newBuilder(URI.create(to.baseUrl() + path))
                .header("Authorization", "Bearer " + key).header("Content-Type", "application/json")
                .timeout(Duration.ofSeconds(120)).POST(HttpRequest.BodyPublishers.ofString(body)).build();
    }
}
