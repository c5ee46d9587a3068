package io.turnstream.gateway.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.turnstream.gateway.GatewayConfig;
import io.turnstream.gateway.loop.ApprovalDecisions;
import io.turnstream.gateway.loop.GatewayMetrics;
import io.turnstream.gateway.view.LiveTopicsGateway;
import io.turnstream.gateway.view.TurnRecords;
import io.turnstream.gateway.view.TurnViewConfig;
import io.turnstream.model.ChangeType;
import io.turnstream.model.Json;
import io.turnstream.runtime.HealthServer;
import io.turnstream.runtime.Settings;
import io.turnstream.testsupport.UsesBroker;
import io.turnstream.tools.ToolContext;
import io.turnstream.tools.ToolErrors;
import io.turnstream.tools.ToolException;
import io.turnstream.tools.ToolExecutorConfig;
import io.turnstream.tools.ToolRegistry;
import io.turnstream.tools.Workspace;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 21's "Why", replayed as a hostile tenant would, against a gateway with API keys on a real broker,
 * over HTTP on loopback. Each test is one finding; it fails if what the finding describes comes back.
 * Kafka itself (SASL/SCRAM and least-privilege ACLs per service, with the Java clients and with kcat, and
 * no broker port on a public interface in docker-compose) is replayed in turnstream-dist, which has the
 * ACLs: {@code SecureBrokerTest} and {@code DockerComposeTest}. Spend and claims are replayed where their
 * state lives: budgets and turn limits across two gateway instances ({@code SpendAcrossGatewaysTest}), the
 * default allow-list ({@code SpendPolicyTest}), a forged tenant on {@code response_start} or a tool call
 * ({@code TenantClaimTest}, {@code ToolExecutorServiceTest}), approvals and the ledger keyed by turn and call
 * ({@code ToolSchedulerTest}).
 */
@UsesBroker
class RedTeamTest {

    private static final String KEY_A = "key-of-tenant-a-" + UUID.randomUUID();
    private static final String KEY_B = "key-of-tenant-b-" + UUID.randomUUID();
    private static final String KEY_C = "key-of-tenant-c-" + UUID.randomUUID();
    private static final String KEY_D = "key-of-tenant-d-" + UUID.randomUUID();
    /** Tenants that flood unknown turns, each within its burst of requests. */
    private static final int FLOOD_TENANTS = 10;
    private static final String FLOOD_KEY = "key-of-flooding-tenant-";
    private static final int MAX_OPEN_STREAMS = 20;
    private static final int REQUESTS_PER_SECOND = 50;
    private static final int MAX_QUEUED_PER_CLIENT = 4;
    private static final int MAX_STEPS_LIMIT = 25;
    /** Long enough that, were the wait a sleeping request thread, the flood below would hold the pool. */
    private static final Duration UNKNOWN_TURN_GRACE = Duration.ofSeconds(60);

    private static LiveTopicsGateway live;
    private static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(30)).build();

    @BeforeAll
    static void startGateway() throws Exception {
        StringBuilder keys = new StringBuilder("tenant-a:" + KEY_A + "\ntenant-b:" + KEY_B + "\ntenant-c:" + KEY_C
                + "\ntenant-d:" + KEY_D + "\n");
        for (int i = 0; i < FLOOD_TENANTS; i++) {
            keys.append("flood-").append(i).append(':').append(FLOOD_KEY).append(i).append('\n');
        }
        Path keysFile = Files.writeString(Files.createTempDirectory("red-team").resolve("api-keys"), keys);
        live = LiveTopicsGateway.start(Map.of(SecurityConfig.API_KEYS_FILE, keysFile.toString(),
                SecurityConfig.PREFIX + "unknown-turn-grace-ms", String.valueOf(UNKNOWN_TURN_GRACE.toMillis()),
                SecurityConfig.PREFIX + "tenant.max-open-streams", String.valueOf(MAX_OPEN_STREAMS),
                SecurityConfig.PREFIX + "tenant.max-requests-per-second", String.valueOf(REQUESTS_PER_SECOND),
                SecurityConfig.PREFIX + "max-steps-limit", String.valueOf(MAX_STEPS_LIMIT),
                TurnViewConfig.PREFIX + "max-queued-per-client", String.valueOf(MAX_QUEUED_PER_CLIENT)));
    }

    @AfterAll
    static void stopGateway() {
        live.close();
    }

    /** "tenant C posts to /api/chat with the same id: B's resume then answers 204". */
    @Test
    void anotherTenantOnTheSameChatIdDoesNotTakeOverTheResume() throws Exception {
        TurnRecords ofB = live.newTurn("chat-42", "tenant-b");
        ofB.started();
        await().until(() -> live.gateway().views().runningTurnOf("chat-42", "tenant-b").isPresent());
        TurnRecords ofC = live.newTurn("chat-42", "tenant-c");
        ofC.started();
        await().until(() -> live.gateway().views().runningTurnOf("chat-42", "tenant-c").isPresent());

        HttpResponse<InputStream> resumeOfB = http.send(get("/api/chat/chat-42/stream", KEY_B),
                HttpResponse.BodyHandlers.ofInputStream());
        resumeOfB.body().close();

        assertThat(resumeOfB.statusCode()).isEqualTo(200);
        assertThat(live.gateway().views().runningTurnOf("chat-42", "tenant-b")).hasValue(ofB.id);
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
        TurnRecords turn = live.newTurn("thread-" + UUID.randomUUID(), "tenant-c");
        turn.started();
        turn.message("m1", "Hello", ChangeType.CREATED);
        await().until(() -> live.gateway().views().snapshot(turn.id, null).isPresent());
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
        TurnRecords ofA = live.newTurn("thread-" + UUID.randomUUID(), "tenant-a");
        TurnRecords ofB = live.newTurn("thread-" + UUID.randomUUID(), "tenant-b");
        ofA.started();
        ofB.started();
        await().until(() -> live.gateway().views().snapshot(ofA.id, null).isPresent()
                && live.gateway().views().snapshot(ofB.id, null).isPresent());
        long fellBehindBefore = live.gateway().metrics().get(GatewayMetrics.Counter.SSE_STREAMS_FELL_BEHIND);
        CompletableFuture<HttpResponse<String>> streamOfB = http.sendAsync(get("/v1/turns/" + ofB.id + "/events", KEY_B),
                HttpResponse.BodyHandlers.ofString());
        List<StalledSseClient> stalled = new ArrayList<>();
        try {
            for (int i = 0; i < MAX_OPEN_STREAMS; i++) {
                stalled.add(StalledSseClient.get(live.gateway().port(), "/v1/turns/" + ofA.id + "/events", KEY_A));
            }
            // megabytes for each client: far more than its socket buffers and its queue hold
            String block = "x".repeat(48 * 1024);
            for (int i = 0; i < 64; i++) {
                ofA.message("a" + i, block, ChangeType.COMPLETED);
            }
            await().atMost(Duration.ofMinutes(2)).until(() -> live.gateway().metrics()
                    .get(GatewayMetrics.Counter.SSE_STREAMS_FELL_BEHIND) - fellBehindBefore == MAX_OPEN_STREAMS);

            ofB.message("b1", "Hello from B", ChangeType.CREATED);
            ofB.message("b1", "Hello from B, done", ChangeType.COMPLETED);
            ofB.completed();
            HttpResponse<String> ofBStream = streamOfB.get();

            assertThat(ofBStream.statusCode()).isEqualTo(200);
            assertThat(ofBStream.body()).contains("Hello from B, done").contains("turn_completed");
            for (StalledSseClient client : stalled) {
                assertThat(client.readResponse()).startsWith("HTTP/1.1 200").endsWith("event: error\ndata: {\"error\":"
                        + "\"this stream fell more than " + MAX_QUEUED_PER_CLIENT + " events behind and is closed;"
                        + " reconnect with Last-Event-ID to resume\"}\n\n");
            }
        } finally {
            ofA.completed();
            for (StalledSseClient client : stalled) {
                client.close();
            }
        }
    }

    /**
     * The asynchronous wait for an unknown turn and the non-blocking stream together: a stream asked for
     * before its turn is known (the turn is accepted by another instance, say) streams once the turn appears.
     */
    @Test
    void aStreamAskedForBeforeItsTurnIsKnownStreamsOnceItAppears() throws Exception {
        TurnRecords turn = live.newTurn("thread-" + UUID.randomUUID(), "tenant-b");
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
        HttpResponse<String> ofB = http.send(post("/v1/turns", KEY_B, "{\"prompt\": \"hello\"}"),
                HttpResponse.BodyHandlers.ofString());
        List<HttpResponse<String>> answers = burst.stream().map(CompletableFuture::join).toList();

        assertThat(ofB.statusCode()).isEqualTo(202);
        assertThat(answers).filteredOn(response -> response.statusCode() == 429).isNotEmpty().allSatisfy(response -> {
            assertThat(response.headers().firstValue("Retry-After")).hasValue("1");
            assertThat(response.body()).contains("max-requests-per-second");
        });
        assertThat(answers).as("what the rate let through reached the route, which refused the body")
                .filteredOn(response -> response.statusCode() != 429).isNotEmpty()
                .allSatisfy(response -> assertThat(response.statusCode()).isEqualTo(400));
    }

    /** "The tool sandbox has no quotas: write_file has no size limit" (the executor's defaults, its real tool). */
    @Test
    void theSandboxRefusesAWriteOverItsDefaultQuota() throws Exception {
        Path workspace = Files.createTempDirectory("red-team-workspace");
        ToolExecutorConfig defaults = ToolExecutorConfig.from(Settings.of(new Properties())
                .with(ToolExecutorConfig.WORKSPACE, workspace.toString()));
        ToolContext context = new ToolContext("call-1", "turn-1", new Workspace(workspace), defaults.limits(),
                defaults.writeQuota(), () -> false);
        ObjectNode arguments = Json.MAPPER.createObjectNode().put("path", "huge.txt")
                .put("content", "x".repeat((int) defaults.writeQuota().maxCallBytes() + 1));

        assertThatThrownBy(() -> ToolRegistry.installed().find("write_file").orElseThrow().execute(arguments, context))
                .isInstanceOfSatisfying(ToolException.class, e -> assertThat(e.code()).isEqualTo(ToolErrors.QUOTA_EXCEEDED));
        assertThat(workspace.resolve("huge.txt")).doesNotExist();
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

    private static HttpRequest get(String path, String key) {
        return HttpRequest.newBuilder(URI.create(live.gateway().baseUrl() + path))
                .header("Authorization", "Bearer " + key).timeout(Duration.ofSeconds(120)).build();
    }

    private static HttpRequest post(String path, String key, String body) {
        return HttpRequest.newBuilder(URI.create(live.gateway().baseUrl() + path))
                .header("Authorization", "Bearer " + key).header("Content-Type", "application/json")
                .timeout(Duration.ofSeconds(120)).POST(HttpRequest.BodyPublishers.ofString(body)).build();
    }
}
