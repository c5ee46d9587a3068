package io.turnstream.gateway.thread;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.turnstream.gateway.BrokerStack;
import io.turnstream.gateway.Gateway;
import io.turnstream.gateway.ProviderEndpoints;
import io.turnstream.gateway.provider.ErrorCodes;
import io.turnstream.gateway.sim.SimulatedAnthropicServer;
import io.turnstream.gateway.sim.SimulatedReply;
import io.turnstream.gateway.sim.SimulatedRequest;
import io.turnstream.gateway.sim.SimulatedText;
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.gateway.turn.TurnRequest;
import io.turnstream.gateway.view.TurnSnapshot;
import io.turnstream.model.Json;
import io.turnstream.model.Topics;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.model.UiPayloadType;
import io.turnstream.runtime.Settings;
import io.turnstream.testsupport.UsesBroker;
import io.turnstream.tools.ToolRegistry;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Server-side threads end to end: the real topology and tool executor on an embedded broker, the gateway calling
 * the simulated Anthropic server over loopback HTTP, which records what it receives. A request that sends only
 * the new message gets the thread's whole conversation sent to the provider; a message to a busy thread follows
 * the gateway's {@link BusyThreadPolicy}. Each test starts its own gateway (one at a time, one consumer group).
 */
@UsesBroker
class ThreadTurnsTest {

    private static final long TURN_TIMEOUT_S = 60;
    /** What the simulated model answers once it has listed the workspace. */
    private static final String LOOKED = "The workspace holds a README.";
    private static final String SLOW_ANSWER = SimulatedText.words(300);

    @TempDir
    static Path home;

    @RegisterExtension
    static final BrokerStack stack = new BrokerStack();
    private static SimulatedAnthropicServer provider;
    private static final HttpClient http = HttpClient.newHttpClient();
    /** The last request body the provider received, by its last user text. */
    private static final Map<String, JsonNode> received = new ConcurrentHashMap<>();

    @BeforeAll
    static void startEverything() throws Exception {
        stack.broker(2);
        stack.topology("thread-turns", home.resolve("state"));
        stack.executor(home.resolve("workspace"), ToolRegistry.installed(), Map.of());
        provider = stack.closing(SimulatedAnthropicServer.start(0, ThreadTurnsTest::script, 0));
    }

    /**
     * {@code look: ...} thinks, lists the workspace, then answers {@link #LOOKED}; {@code slow: ...} answers
     * {@link #SLOW_ANSWER} at 100 tokens/s, {@code endless: ...} a very long answer; anything else answers at once.
     */
    private static SimulatedReply script(SimulatedRequest request) {
        String last = request.lastUserText();
        if (last != null) {
            received.put(last, request.body());
        }
        if (!request.lastToolResults().isEmpty()) {
            return SimulatedReply.answer().text(LOOKED);
        }
        if (last != null && last.startsWith("look:")) {
            return SimulatedReply.answer().thinking("Let me look.")
                    .toolUse("list_files", Json.MAPPER.createObjectNode().put("path", "."));
        }
        if (last != null && last.startsWith("slow:")) {
            return SimulatedReply.answer().text(SLOW_ANSWER).tokensPerSecond(100);
        }
        if (last != null && last.startsWith("endless:")) {
            return SimulatedReply.answer().text(SimulatedText.words(20_000)).tokensPerSecond(50);
        }
        return SimulatedReply.answer().text("Answered: " + last);
    }

    /** The second turn sends only its prompt; the provider gets the first turn whole, signature and tool result included. */
    @Test
    void aSecondTurnSendingOnlyTheNewMessageGetsTheWholeConversation() throws Exception {
        try (Gateway gateway = gateway("reject")) {
            String thread = "thread-" + UUID.randomUUID();
            String first = startTurn(gateway, thread, "look: what is in the workspace?").get("turnId").asText();
            assertThat(ended(gateway, first).status()).isEqualTo(TurnPhase.COMPLETE);

            String second = startTurn(gateway, thread, "What does it hold?").get("turnId").asText();
            assertThat(ended(gateway, second).status()).isEqualTo(TurnPhase.COMPLETE);

            JsonNode messages = received.get("What does it hold?").get("messages");
            assertThat(roles(messages)).containsExactly("user", "assistant", "user", "assistant", "user");
            assertThat(text(messages.get(0))).isEqualTo("look: what is in the workspace?");
            JsonNode step = messages.get(1).get("content");
            assertThat(step.get(0).get("type").asText()).isEqualTo("thinking");
            assertThat(step.get(0).get("thinking").asText()).isEqualTo("Let me look.");
            assertThat(step.get(0).get("signature").asText()).as("the thinking block's signature, as sent")
                    .isEqualTo("c2ltdWxhdGVkLXNpZ25hdHVyZQ==");
            assertThat(step.get(1).get("type").asText()).isEqualTo("tool_use");
            assertThat(step.get(1).get("name").asText()).isEqualTo("list_files");
            JsonNode result = messages.get(2).get("content").get(0);
            assertThat(result.get("type").asText()).isEqualTo("tool_result");
            assertThat(result.get("tool_use_id").asText()).isEqualTo(step.get(1).get("id").asText());
            assertThat(result.get("content").toString()).contains("README.md");
            assertThat(messages.get(3).toString()).contains(LOOKED);
            assertThat(text(messages.get(4))).isEqualTo("What does it hold?");
        }
    }

    /** useChat's default: the whole history; the assistant message it sends back is the gateway's turn, whole. */
    @Test
    void useChatsWholeHistoryGetsTheGatewaysAnswerBackWithItsToolCall() throws Exception {
        try (Gateway gateway = gateway("reject")) {
            String chat = "chat-" + UUID.randomUUID();
            var first = Json.MAPPER.createArrayNode().add(uiMessage("u-1", "user", "look: what is in the workspace?"));
            String answered = chat(gateway, chat, first);

            var whole = first.deepCopy().add(uiMessage(answered, "assistant", LOOKED))
                    .add(uiMessage("u-2", "user", "What does the chat hold?"));
            chat(gateway, chat, whole);

            JsonNode messages = received.get("What does the chat hold?").get("messages");
            assertThat(roles(messages)).containsExactly("user", "assistant", "user", "assistant", "user");
            assertThat(messages.get(1).get("content").get(1).get("type").asText()).isEqualTo("tool_use");
            assertThat(messages.get(2).get("content").get(0).get("type").asText()).isEqualTo("tool_result");
            assertThat(messages.get(3).toString()).contains(LOOKED);
        }
    }

    /** A file sent with useChat's first message goes to the provider again on a later turn that sends only its text. */
    @Test
    void aFilePartSurvivesTheThreadsLaterTurn() throws Exception {
        try (Gateway gateway = gateway("reject")) {
            String chat = "chat-" + UUID.randomUUID();
            String png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
            var first = uiMessage("u-1", "user", "What is in this picture?");
            ((ArrayNode) first.get("parts")).insertObject(0).put("type", "file")
                    .put("mediaType", "image/png").put("url", "data:image/png;base64," + png).put("filename", "dot.png");
            chat(gateway, chat, Json.MAPPER.createArrayNode().add(first));
            JsonNode image = received.get("What is in this picture?").at("/messages/0/content/0");
            assertThat(image.at("/source/data").asText()).as("the first turn's provider request").isEqualTo(png);

            chat(gateway, chat, Json.MAPPER.createArrayNode().add(uiMessage("u-2", "user", "And its colour?")));

            JsonNode messages = received.get("And its colour?").get("messages");
            assertThat(roles(messages)).containsExactly("user", "assistant", "user");
            JsonNode again = messages.get(0).get("content");
            assertThat(again.get(0).get("type").asText()).isEqualTo("image");
            assertThat(again.get(0).get("source")).isEqualTo(Json.MAPPER.createObjectNode().put("type", "base64")
                    .put("media_type", "image/png").put("data", png));
            assertThat(text(messages.get(0))).isEqualTo("What is in this picture?");
            assertThat(text(messages.get(2))).isEqualTo("And its colour?");
        }
    }

    @Test
    void underRejectAMessageToABusyThreadIsA409() throws Exception {
        try (Gateway gateway = gateway("reject")) {
            String thread = "thread-" + UUID.randomUUID();
            String running = startTurn(gateway, thread, "endless: talk").get("turnId").asText();

            HttpResponse<String> refused = post(gateway, thread, "Are you there?");

            assertThat(refused.statusCode()).isEqualTo(409);
            assertThat(Json.MAPPER.readTree(refused.body()).get("error").asText()).contains(running)
                    .contains("/v1/turns/" + running + "/cancel");
            gateway.commands().cancel(running, "test over");
            assertThat(ended(gateway, running).status()).isEqualTo(TurnPhase.ABORTED);
            assertThat(post(gateway, thread, "Now?").statusCode()).as("an idle thread takes a message").isEqualTo(202);
        }
    }

    @Test
    void underEnqueueTheMessageRunsAfterTheRunningTurnWithItsAnswer() throws Exception {
        try (Gateway gateway = gateway("enqueue")) {
            String thread = "thread-" + UUID.randomUUID();
            String running = startTurn(gateway, thread, "slow: tell me a story").get("turnId").asText();
            String queued = startTurn(gateway, thread, "And then?").get("turnId").asText();

            assertThat(ended(gateway, queued).status()).isEqualTo(TurnPhase.COMPLETE);
            assertThat(ended(gateway, running).status()).as("the running turn was left alone")
                    .isEqualTo(TurnPhase.COMPLETE);
            JsonNode messages = received.get("And then?").get("messages");
            assertThat(roles(messages)).containsExactly("user", "assistant", "user");
            assertThat(messages.get(1).toString()).as("it ran after the first turn's whole answer")
                    .contains(SLOW_ANSWER.substring(SLOW_ANSWER.length() - 40));
        }
    }

    /**
     * A queued turn shows nowhere but its request until it starts; every instance knows it from that request: one
     * that neither accepted nor runs it answers its status (running, nothing said yet) and streams its events.
     */
    @Test
    void underEnqueueAQueuedTurnIsKnownToEveryInstanceBeforeItStarts() throws Exception {
        try (Gateway one = gateway("enqueue"); Gateway two = gateway("enqueue")) {
            String thread = "thread-" + UUID.randomUUID();
            String running = startTurn(one, thread, "endless: talk").get("turnId").asText();
            awaitRunning(one, running);
            Awaitility.await().atMost(Duration.ofSeconds(TURN_TIMEOUT_S)).until(() ->
                    one.commands().status(running).isPresent() || two.commands().status(running).isPresent());
            Gateway owner = one.commands().status(running).isPresent() ? one : two;
            Gateway other = owner == one ? two : one;
            String queued = startTurn(owner, thread, "And then?").get("turnId").asText();

            Awaitility.await().atMost(Duration.ofSeconds(TURN_TIMEOUT_S)).untilAsserted(() -> {
                HttpResponse<String> status = http.send(HttpRequest.newBuilder(URI.create(other.baseUrl()
                        + "/v1/turns/" + queued)).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(status.statusCode()).as(status.body()).isEqualTo(200);
                JsonNode snapshot = Json.MAPPER.readTree(status.body());
                assertThat(snapshot.get("status").asText()).isEqualTo("running");
                assertThat(snapshot.get("threadId").asText()).isEqualTo(thread);
            });
            HttpResponse<InputStream> events = http.send(HttpRequest.newBuilder(URI.create(other.baseUrl()
                    + "/v1/turns/" + queued + "/events")).build(), HttpResponse.BodyHandlers.ofInputStream());
            events.body().close();
            assertThat(events.statusCode()).as("its events can be followed there").isEqualTo(200);
            assertThat(owner.views().snapshot(queued, null).map(TurnSnapshot::turn)).as("it has not started")
                    .isEmpty();
            assertThat(owner.views().snapshot(running, null).orElseThrow().status()).isEqualTo(TurnPhase.RUNNING);

            other.commands().cancel(running, "test over");
            assertThat(ended(other, queued).status()).isEqualTo(TurnPhase.COMPLETE);
        }
    }

    @Test
    void underInterruptTheRunningTurnIsCancelledThenTheMessageRuns() throws Exception {
        try (Gateway gateway = gateway("interrupt")) {
            String thread = "thread-" + UUID.randomUUID();
            String running = startTurn(gateway, thread, "endless: talk").get("turnId").asText();
            awaitRunning(gateway, running);
            String next = startTurn(gateway, thread, "Stop, and say hi").get("turnId").asText();

            assertThat(ended(gateway, next).status()).isEqualTo(TurnPhase.COMPLETE);
            TurnSnapshot interrupted = ended(gateway, running);
            assertThat(interrupted.status()).isEqualTo(TurnPhase.ABORTED);
            JsonNode messages = received.get("Stop, and say hi").get("messages");
            assertThat(text(messages.get(0))).isEqualTo("endless: talk");
            assertThat(text(messages.get(messages.size() - 1))).isEqualTo("Stop, and say hi");
        }
    }

    /**
     * A request that beat the 409 check (another gateway accepted it at the same moment, before either saw the
     * other's turn) is ended by the gateway running the thread: {@code turn_error} {@code THREAD_BUSY}.
     */
    @Test
    void underRejectTheGatewayRunningTheThreadEndsARequestThatSlippedThrough() throws Exception {
        try (Gateway gateway = gateway("reject")) {
            String thread = "thread-" + UUID.randomUUID();
            String running = startTurn(gateway, thread, "endless: talk").get("turnId").asText();
            awaitRunning(gateway, running);
            String slipped = "turn-" + UUID.randomUUID();
            // straight onto llm.turn-requests, as the other gateway put it there
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, stack.bootstrapServers()),
                    new StringSerializer(), new StringSerializer())) {
                producer.send(new ProducerRecord<>(Topics.DEFAULTS.turnRequests(), thread, Json.toString(
                        TurnRequestRecord.request(slipped, thread, "run-" + UUID.randomUUID(), null,
                                System.currentTimeMillis(), TurnRequest.prompt("simulated", null, "Me too")
                                        .inThread(thread, true).toJson())))).get();
            }

            TurnSnapshot refused = ended(gateway, slipped);
            assertThat(refused.status()).isEqualTo(TurnPhase.ERROR);
            assertThat(refused.turn().error().code()).isEqualTo(ErrorCodes.THREAD_BUSY);
            assertThat(gateway.views().snapshot(running, null).orElseThrow().status()).as("the running turn goes on")
                    .isEqualTo(TurnPhase.RUNNING);
            gateway.commands().cancel(running, "test over");
            ended(gateway, running);

            String after = startTurn(gateway, thread, "After that?").get("turnId").asText();
            assertThat(ended(gateway, after).status()).isEqualTo(TurnPhase.COMPLETE);
            assertThat(received.get("After that?").get("messages").toString())
                    .as("the refused request is not part of the thread's conversation").doesNotContain("Me too")
                    .contains("endless: talk");
        }
    }

    private static Gateway gateway(String busyPolicy) throws Exception {
        Properties settings = stack.gatewaySettings();
        settings.put(BusyThreadPolicy.KEY, busyPolicy);
        Gateway gateway = Gateway.start(Settings.of(settings), ProviderEndpoints.simulatedOnly(provider.baseUrl()),
                List.of());
        gateway.views().loaded().get(TURN_TIMEOUT_S, TimeUnit.SECONDS);
        return gateway;
    }

    private static JsonNode startTurn(Gateway gateway, String thread, String prompt) throws Exception {
        HttpResponse<String> response = post(gateway, thread, prompt);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(202);
        return Json.MAPPER.readTree(response.body());
    }

    private static HttpResponse<String> post(Gateway gateway, String thread, String prompt) throws Exception {
        String body = Json.MAPPER.createObjectNode().put("provider", "simulated").put("threadId", thread)
                .put("prompt", prompt).toString();
        return http.send(HttpRequest.newBuilder(URI.create(gateway.baseUrl() + "/v1/turns"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode uiMessage(String id, String role, String text) {
        var message = Json.MAPPER.createObjectNode().put("id", id).put("role", role);
        message.putArray("parts").addObject().put("type", "text").put("text", text);
        return message;
    }

    /** Posts to {@code /api/chat} and reads the answer's stream to its end; returns the answer's id (the turn id). */
    private static String chat(Gateway gateway, String chatId, JsonNode messages) throws Exception {
        var body = Json.MAPPER.createObjectNode().put("id", chatId).put("trigger", "submit-message")
                .put("provider", "simulated");
        body.set("messages", messages);
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(gateway.baseUrl() + "/api/chat"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body.toString()))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        assertThat(response.body()).contains("\"type\":\"finish\"");
        String start = response.body().lines().filter(line -> line.startsWith("data: {\"type\":\"start\""))
                .findFirst().orElseThrow();
        return Json.MAPPER.readTree(start.substring("data: ".length())).get("messageId").asText();
    }

    private static TurnSnapshot ended(Gateway gateway, String turnId) throws Exception {
        return gateway.views().ended(turnId).get(TURN_TIMEOUT_S, TimeUnit.SECONDS);
    }

    /** Until the turn's first text shows: its model call is streaming. */
    private static void awaitRunning(Gateway gateway, String turnId) {
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(TURN_TIMEOUT_S))
                .until(() -> gateway.views().snapshot(turnId, null).map(snapshot -> snapshot.turn() != null
                        && snapshot.turn().type() == UiPayloadType.TURN_STARTED).orElse(false));
    }

    /** A message's text: its string content, or its text blocks (the last one carries the cache breakpoint). */
    private static String text(JsonNode message) {
        JsonNode content = message.get("content");
        if (content.isTextual()) {
            return content.asText();
        }
        StringBuilder text = new StringBuilder();
        content.forEach(block -> text.append(block.path("text").asText()));
        return text.toString();
    }

    private static List<String> roles(JsonNode messages) {
        List<String> roles = new ArrayList<>();
        messages.forEach(message -> roles.add(message.get("role").asText()));
        return roles;
    }
}
