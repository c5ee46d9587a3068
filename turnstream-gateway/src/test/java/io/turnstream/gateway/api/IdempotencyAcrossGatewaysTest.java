package io.turnstream.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.gateway.BrokerStack;
import io.turnstream.gateway.Gateway;
import io.turnstream.gateway.sim.SimulatedAnthropicServer;
import io.turnstream.gateway.sim.SimulatedReply;
import io.turnstream.gateway.sim.SimulatedRequest;
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.model.Json;
import io.turnstream.testsupport.UsesBroker;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code Idempotency-Key} behind a load balancer: two gateway instances on one embedded broker (one consumer group,
 * the real topology), the simulated provider over loopback HTTP counting its calls. A retry that reaches the other
 * instance gets the same turn, which runs once; another body under the key is a 422 there too.
 */
@UsesBroker
class IdempotencyAcrossGatewaysTest {

    private static final long TURN_TIMEOUT_S = 60;

    @TempDir
    static Path home;

    @RegisterExtension
    static final BrokerStack stack = new BrokerStack();
    private static SimulatedAnthropicServer provider;
    private static Gateway first;
    private static Gateway second;
    private static final HttpClient http = HttpClient.newHttpClient();
    /** Model calls by the request's last user text. */
    private static final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

    @BeforeAll
    static void startEverything() throws Exception {
        stack.broker(2);
        stack.topology("idempotency", home.resolve("state"));
        provider = stack.closing(SimulatedAnthropicServer.start(0, IdempotencyAcrossGatewaysTest::script, 0));
        first = gateway();
        second = gateway();
    }

    private static SimulatedReply script(SimulatedRequest request) {
        String last = request.lastUserText();
        calls.computeIfAbsent(String.valueOf(last), text -> new AtomicInteger()).incrementAndGet();
        return SimulatedReply.answer().text("Answered: " + last);
    }

    @Test
    void aRetryAtTheOtherInstanceGetsTheSameTurnAndAnotherBodyIsRefusedThere() throws Exception {
        String key = "key-" + UUID.randomUUID();
        String prompt = "once only " + key;
        HttpResponse<String> accepted = post(first, key, body(prompt, null));
        assertThat(accepted.statusCode()).as(accepted.body()).isEqualTo(202);
        String turnId = Json.MAPPER.readTree(accepted.body()).get("turnId").asText();

        // a retry is harmless whenever it comes: the other instance names the same turn; once Kafka has told it
        // the key (the request record, or the turn's events) it answers it as a replay
        await().atMost(Duration.ofSeconds(TURN_TIMEOUT_S)).untilAsserted(() -> {
            HttpResponse<String> retried = post(second, key, body(prompt, null));
            assertThat(retried.statusCode()).isEqualTo(202);
            assertThat(Json.MAPPER.readTree(retried.body()).get("turnId").asText()).isEqualTo(turnId);
            assertThat(retried.headers().firstValue(TurnStarts.REPLAYED_HEADER)).contains("true");
        });
        await().atMost(Duration.ofSeconds(TURN_TIMEOUT_S)).untilAsserted(() -> {
            HttpResponse<String> other = post(second, key, body("another prompt " + key, null));
            assertThat(other.statusCode()).isEqualTo(422);
            assertThat(Json.MAPPER.readTree(other.body()).get("error").asText()).contains(key)
                    .contains("different request");
        });
        assertThat(second.views().ended(turnId).get(TURN_TIMEOUT_S, TimeUnit.SECONDS).status())
                .isEqualTo(TurnPhase.COMPLETE);
        assertThat(calls.get(prompt)).as("the model was called once").hasValue(1);
    }

    /**
     * Both instances take the key at the same moment, before either has read the other's request: the key names
     * the turn, so both answer the same one, and the instance running the thread runs it once.
     */
    @Test
    void simultaneousRequestsToBothInstancesStartOneTurn() throws Exception {
        String key = "key-" + UUID.randomUUID();
        String thread = "thread-" + UUID.randomUUID();
        String prompt = "at the same moment " + key;
        CompletableFuture<HttpResponse<String>> here = CompletableFuture.supplyAsync(() -> post(first, key,
                body(prompt, thread)));
        CompletableFuture<HttpResponse<String>> there = CompletableFuture.supplyAsync(() -> post(second, key,
                body(prompt, thread)));
        JsonNode one = Json.MAPPER.readTree(here.get(TURN_TIMEOUT_S, TimeUnit.SECONDS).body());
        JsonNode two = Json.MAPPER.readTree(there.get(TURN_TIMEOUT_S, TimeUnit.SECONDS).body());

        assertThat(two.get("turnId").asText()).isEqualTo(one.get("turnId").asText());
        assertThat(first.views().ended(one.get("turnId").asText()).get(TURN_TIMEOUT_S, TimeUnit.SECONDS).status())
                .isEqualTo(TurnPhase.COMPLETE);
        // a later turn of the thread is read after both requests: once it has ended, both were dealt with
        HttpResponse<String> later = post(first, null, body("and then " + key, thread));
        assertThat(later.statusCode()).as(later.body()).isEqualTo(202);
        first.views().ended(Json.MAPPER.readTree(later.body()).get("turnId").asText())
                .get(TURN_TIMEOUT_S, TimeUnit.SECONDS);
        assertThat(calls.get(prompt)).as("the model was called once").hasValue(1);
    }

    private static Gateway gateway() throws Exception {
        Gateway gateway = stack.gateway(stack.gatewaySettings(), provider);
        gateway.views().loaded().get(TURN_TIMEOUT_S, TimeUnit.SECONDS);
        return gateway;
    }

    private static String body(String prompt, String thread) {
        var body = Json.MAPPER.createObjectNode().put("provider", "simulated").put("prompt", prompt);
        if (thread != null) {
            body.put("threadId", thread);
        }
        return body.toString();
    }

    private static HttpResponse<String> post(Gateway gateway, String key, String body) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(gateway.baseUrl() + "/v1/turns"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
        if (key != null) {
            request.header(IdempotencyKeys.HEADER, key);
        }
        try {
            return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
