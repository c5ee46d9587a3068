package io.turnstream.gateway.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.turnstream.gateway.loop.ApprovalDecisions;
import io.turnstream.gateway.view.LiveTopicsGateway;
import io.turnstream.gateway.view.TurnRecords;
import io.turnstream.model.ChangeType;
import io.turnstream.testsupport.UsesBroker;
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
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 21's "Why", replayed as a hostile tenant would, against a gateway with API keys on a real broker.
 * Each test is one bullet; it fails if what the bullet describes comes back. (Kafka ACLs per principal:
 * {@code SecureBrokerTest} in turnstream-dist; sandbox quotas: the tool executor's tests; the management
 * port: {@code ManagementAddressTest}.)
 */
@UsesBroker
class RedTeamTest {

    private static final String KEY_B = "key-of-tenant-b-" + UUID.randomUUID();
    private static final String KEY_C = "key-of-tenant-c-" + UUID.randomUUID();
    private static final int MAX_OPEN_STREAMS = 3;
    /** Long enough that, were the wait a sleeping request thread, the flood below would hold the pool. */
    private static final Duration UNKNOWN_TURN_GRACE = Duration.ofSeconds(60);

    private static LiveTopicsGateway live;
    private static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(30)).build();

    @BeforeAll
    static void startGateway() throws Exception {
        Path keys = Files.writeString(Files.createTempDirectory("red-team").resolve("api-keys"),
                "tenant-b:" + KEY_B + "\ntenant-c:" + KEY_C + "\n");
        live = LiveTopicsGateway.start(Map.of(SecurityConfig.API_KEYS_FILE, keys.toString(),
                SecurityConfig.PREFIX + "unknown-turn-grace-ms", String.valueOf(UNKNOWN_TURN_GRACE.toMillis()),
                SecurityConfig.PREFIX + "tenant.max-open-streams", String.valueOf(MAX_OPEN_STREAMS),
                SecurityConfig.PREFIX + "tenant.max-requests-per-second", "100000"));
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
            flood.add(floodClient.sendAsync(get("/v1/turns/turn-unknown-" + i, KEY_C), HttpResponse.BodyHandlers.ofString()));
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
