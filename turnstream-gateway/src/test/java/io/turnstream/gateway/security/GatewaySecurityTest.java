package io.turnstream.gateway.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.gateway.BrokerStack;
import io.turnstream.gateway.Gateway;
import io.turnstream.gateway.ProviderEndpoints;
import io.turnstream.gateway.sim.SimulatedAnthropicServer;
import io.turnstream.gateway.sim.SimulatedReply;
import io.turnstream.gateway.sim.SimulatedRequest;
import io.turnstream.gateway.sim.SimulatedText;
import io.turnstream.model.Json;
import io.turnstream.runtime.Settings;
import io.turnstream.testsupport.UsesBroker;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gateway's public API as an attacker and two tenants meet it: a real broker, the topology, the
 * simulated provider, and two gateway instances sharing one keys file, so a turn accepted by one is
 * checked by the other from what Kafka says about it.
 */
@UsesBroker
class GatewaySecurityTest {

    private static final String KEY_A = "key-of-tenant-a-0123456789";
    private static final String KEY_B = "key-of-tenant-b-0123456789";
    private static final String ALLOWED_ORIGIN = "https://app.example.com";
    private static final int MAX_CONCURRENT = 2;
    private static final int MAX_FIELD_CHARS = 1_000;

    @TempDir
    static Path dir;

    @RegisterExtension
    static final BrokerStack stack = new BrokerStack();
    private static SimulatedAnthropicServer provider;
    private static Gateway first;
    private static Gateway second;
    private static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @BeforeAll
    static void startEverything() throws Exception {
        stack.broker(3);
        stack.topology("security-test", dir.resolve("state"));
        provider = stack.closing(SimulatedAnthropicServer.start(0, GatewaySecurityTest::script, 0));
        Path keys = Files.writeString(dir.resolve("api-keys"), "# tenant:key\ntenant-a:" + KEY_A + "\ntenant-b:" + KEY_B + "\n");
        first = gateway(keys);
        second = gateway(keys);
    }

    private static Gateway gateway(Path keys) {
        Properties settings = stack.gatewaySettings();
        settings.put(SecurityConfig.API_KEYS_FILE, keys.toString());
        settings.put("turnstream.gateway.cors.allowed-origins", ALLOWED_ORIGIN);
        settings.put("turnstream.gateway.tenant.max-concurrent-turns", String.valueOf(MAX_CONCURRENT));
        settings.put("turnstream.gateway.max-field-chars", String.valueOf(MAX_FIELD_CHARS));
        settings.put("turnstream.gateway.max-body-bytes", "20000");
        settings.put("turnstream.gateway.unknown-turn-grace-ms", "500");
        return stack.gateway(settings, provider);
    }

    /** "slow:" prompts stream for a long time (until cancelled); anything else is a short answer. */
    private static SimulatedReply script(SimulatedRequest request) {
        String prompt = request.firstUserText();
        return prompt.startsWith("slow:")
                ? SimulatedReply.answer().text(SimulatedText.words(20_000)).tokensPerSecond(50)
                : SimulatedReply.answer().text("A short answer.");
    }

    // ---- keys ----

    @Test
    void aRequestWithoutAKeyIsUnauthorized() throws Exception {
        HttpResponse<String> response = send(post(first, "/v1/turns", prompt("hello")));

        assertRefused(response, 401, "an API key is needed");
        assertThat(response.headers().firstValue("WWW-Authenticate")).hasValue("Bearer realm=\"turnstream\"");
        assertRefused(send(get(first, "/v1/turns/turn-x")), 401, "an API key is needed");
        assertRefused(send(get(first, "/")), 401, "an API key is needed");
    }

    @Test
    void aWrongKeyIsUnauthorized() throws Exception {
        HttpResponse<String> response = send(post(first, "/v1/turns", prompt("hello")).header("Authorization", "Bearer not-a-key-of-anyone"));

        assertRefused(response, 401, "the API key is not valid");
        assertThat(response.body()).doesNotContain("not-a-key-of-anyone");
    }

    @Test
    void healthAndMetricsAreOnTheManagementPortWithoutAKeyAndNotOnThePublicOne() throws Exception {
        URI health = URI.create("http://127.0.0.1:" + first.managementPort() + "/health");

        // ready once the two gateways' turn ownership has settled (a rebalance is DOWN meanwhile)
        await().atMost(Duration.ofSeconds(60)).until(() -> send(HttpRequest.newBuilder(health)).statusCode() == 200);
        assertThat(send(get(first, "/metrics"), KEY_A).statusCode()).isEqualTo(404);
    }

    // ---- tenants ----

    @Test
    void aTenantSeesItsTurnOnEveryInstanceAndAnotherTenantFindsNothing() throws Exception {
        String turnId = startTurn(first, KEY_A, "hello").get("turnId").asText();

        // the other instance knows the turn from its request at once; its lifecycle event follows from the topology
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            JsonNode snapshot = Json.fromString(send(get(second, "/v1/turns/" + turnId), KEY_A).body(), JsonNode.class);
            assertThat(snapshot.path("status").asText()).isEqualTo("complete");
            assertThat(snapshot.at("/turn/tenantId").asText()).isEqualTo("tenant-a");
        });

        for (Gateway gateway : List.of(first, second)) {
            assertRefused(send(get(gateway, "/v1/turns/" + turnId), KEY_B), 404, "no turn " + turnId);
            assertRefused(send(get(gateway, "/v1/turns/" + turnId + "/events"), KEY_B), 404, "no turn " + turnId);
            assertRefused(send(post(gateway, "/v1/turns/" + turnId + "/cancel", "{}"), KEY_B), 404, "no turn " + turnId);
            assertRefused(send(post(gateway, "/v1/turns/" + turnId + "/tool-calls/call-1/approval", "{\"approved\": true}"),
                    KEY_B), 404, "no turn " + turnId);
        }
    }

    @Test
    void anotherTenantCannotCancelARunningTurn() throws Exception {
        String turnId = startTurn(first, KEY_A, "slow: a long one").get("turnId").asText();

        assertRefused(send(post(first, "/v1/turns/" + turnId + "/cancel", "{}"), KEY_B), 404, "no turn " + turnId);
        assertThat(send(post(first, "/v1/turns/" + turnId + "/cancel", "{}"), KEY_A).statusCode()).isEqualTo(202);
    }

    @Test
    void theEventsOfATurnNoOneKnowsAreAnsweredWith404() throws Exception {
        HttpResponse<String> response = send(get(second, "/v1/turns/turn-that-never-was/events"), KEY_A);

        assertRefused(response, 404, "no turn turn-that-never-was");
    }

    // ---- cross-site requests ----

    @Test
    void aBodyThatIsNotDeclaredJsonIsRefused() throws Exception {
        HttpResponse<String> textPlain = send(HttpRequest.newBuilder(uri(first, "/v1/turns"))
                .header("Content-Type", "text/plain").POST(HttpRequest.BodyPublishers.ofString(prompt("hi"))), KEY_A);
        HttpResponse<String> form = send(HttpRequest.newBuilder(uri(first, "/v1/turns"))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString("prompt=hi")), KEY_A);

        assertRefused(textPlain, 415, "the body must be JSON, sent with Content-Type: application/json");
        assertRefused(form, 415, "the body must be JSON");
    }

    @Test
    void aPreflightFromAnUnlistedOriginIsRefused() throws Exception {
        HttpResponse<String> response = send(preflight(first, "https://evil.example.net"));

        assertRefused(response, 403, "preflight refused: origin https://evil.example.net may not call this gateway");
        assertThat(response.headers().firstValue("Access-Control-Allow-Origin")).isEmpty();
    }

    @Test
    void aRequestFromAnUnlistedOriginIsRefusedEvenWithAKey() throws Exception {
        HttpResponse<String> response = send(post(first, "/v1/turns", prompt("hello"))
                .header("Origin", "https://evil.example.net"), KEY_A);

        assertRefused(response, 403, "origin https://evil.example.net may not call this gateway");
    }

    @Test
    void aListedOriginGetsItsPreflightAnswered() throws Exception {
        HttpResponse<String> response = send(preflight(first, ALLOWED_ORIGIN));

        assertThat(response.statusCode()).isEqualTo(204);
        assertThat(response.headers().firstValue("Access-Control-Allow-Origin")).hasValue(ALLOWED_ORIGIN);
        assertThat(response.headers().firstValue("Access-Control-Allow-Headers").orElseThrow()).contains("Authorization");
    }

    // ---- limits ----

    @Test
    void aTenantOverItsConcurrentTurnsIsToldToRetryLater() throws Exception {
        List<String> running = new ArrayList<>();
        for (int i = 0; i < MAX_CONCURRENT; i++) {
            running.add(startTurn(second, KEY_B, "slow: turn " + i).get("turnId").asText());
        }

        HttpResponse<String> refused = send(post(second, "/v1/turns", prompt("slow: one too many")), KEY_B);
        HttpResponse<String> otherTenant = send(post(second, "/v1/turns", prompt("hello")), KEY_A);

        assertRefused(refused, 429, "tenant tenant-b is running " + MAX_CONCURRENT + " turns, the limit");
        assertThat(refused.headers().firstValue("Retry-After")).hasValueSatisfying(
                seconds -> assertThat(Long.parseLong(seconds)).isPositive());
        assertThat(otherTenant.statusCode()).as("limits are per tenant").isEqualTo(202);
        for (String turnId : running) {
            assertThat(send(post(second, "/v1/turns/" + turnId + "/cancel", "{}"), KEY_B).statusCode()).isEqualTo(202);
        }
        await().atMost(Duration.ofSeconds(60)).until(() -> send(post(second, "/v1/turns", prompt("hello")), KEY_B).statusCode() == 202);
    }

    @Test
    void aTooLargeBodyOrFieldIsRefusedWithWhatTheLimitIs() throws Exception {
        String longPrompt = "x".repeat(MAX_FIELD_CHARS + 1);
        String hugeBody = "{\"prompt\": \"hi\", \"system\": \"" + "y".repeat(30_000) + "\"}";

        assertRefused(send(post(first, "/v1/turns", prompt(longPrompt)), KEY_A), 413,
                "'prompt' is " + (MAX_FIELD_CHARS + 1) + " characters; the limit is " + MAX_FIELD_CHARS);
        assertRefused(send(post(first, "/v1/turns", hugeBody), KEY_A), 413, "the body is 30");
    }

    // ---- listening without keys ----

    @Test
    void withoutKeysTheGatewayRefusesANonLoopbackAddressUnlessInsecure() {
        Properties settings = stack.gatewaySettings();
        settings.put("turnstream.gateway.host", "0.0.0.0");

        assertThatThrownBy(() -> Gateway.start(Settings.of(settings), ProviderEndpoints.simulatedOnly(provider.baseUrl()), List.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("refusing to listen on 0.0.0.0 without API keys");

        settings.put(SecurityConfig.INSECURE, "true");
        try (Gateway insecure = Gateway.start(Settings.of(settings), ProviderEndpoints.simulatedOnly(provider.baseUrl()), List.of())) {
            assertThat(insecure.port()).isPositive();
        }
    }

    @Test
    void withoutKeysOnlyRequestsAddressedToLocalhostAreServed() throws Exception {
        Properties settings = stack.gatewaySettings();
        try (Gateway local = Gateway.start(Settings.of(settings), ProviderEndpoints.simulatedOnly(provider.baseUrl()), List.of())) {
            assertThat(statusLine(local.port(), "127.0.0.1:" + local.port())).contains(" 404 ");
            assertThat(statusLine(local.port(), "localhost:" + local.port())).contains(" 404 ");
            assertThat(statusLine(local.port(), "rebound.example.com:" + local.port())).contains(" 403 ");
            assertThat(statusLine(local.port(), "127.rebound.example.com:" + local.port())).contains(" 403 ");
        }
    }

    // ---- helpers ----

    private static JsonNode startTurn(Gateway gateway, String key, String prompt) throws Exception {
        HttpResponse<String> response = send(post(gateway, "/v1/turns", prompt(prompt)), key);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(202);
        return Json.fromString(response.body(), JsonNode.class);
    }

    private static String prompt(String text) {
        return Json.toString(Map.of("prompt", text));
    }

    private static URI uri(Gateway gateway, String path) {
        return URI.create(gateway.baseUrl() + path);
    }

    private static HttpRequest.Builder post(Gateway gateway, String path, String body) {
        return HttpRequest.newBuilder(uri(gateway, path)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
    }

    private static HttpRequest.Builder get(Gateway gateway, String path) {
        return HttpRequest.newBuilder(uri(gateway, path)).GET();
    }

    private static HttpRequest.Builder preflight(Gateway gateway, String origin) {
        return HttpRequest.newBuilder(uri(gateway, "/v1/turns")).method("OPTIONS", HttpRequest.BodyPublishers.noBody())
                .header("Origin", origin).header("Access-Control-Request-Method", "POST")
                .header("Access-Control-Request-Headers", "authorization, content-type");
    }

    private static HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        return http.send(request.timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> send(HttpRequest.Builder request, String key) throws Exception {
        return send(request.header("Authorization", "Bearer " + key));
    }

    /** A request with a Host header the JDK's client would not let us set: what a DNS-rebinding page sends. */
    private static String statusLine(int port, String host) throws Exception {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            OutputStream out = socket.getOutputStream();
            out.write(("GET /v1/turns/turn-x HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            String response = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
            return response.lines().findFirst().orElse("");
        }
    }

    private static void assertRefused(HttpResponse<String> response, int status, String message) {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
        assertThat(Json.fromString(response.body(), JsonNode.class).get("error").asText()).contains(message);
    }
}
