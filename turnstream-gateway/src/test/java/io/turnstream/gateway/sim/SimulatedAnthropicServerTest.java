package io.turnstream.gateway.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.gateway.ItemInvariants;
import io.turnstream.gateway.provider.AnthropicMessagesAdapter;
import io.turnstream.gateway.provider.CancelSignal;
import io.turnstream.gateway.provider.Conversation;
import io.turnstream.gateway.provider.ErrorCodes;
import io.turnstream.gateway.provider.FinishReasons;
import io.turnstream.gateway.provider.ModelRequest;
import io.turnstream.gateway.provider.ProviderClient;
import io.turnstream.gateway.provider.ProviderEndpoint;
import io.turnstream.gateway.provider.StallWatchdog;
import io.turnstream.gateway.provider.StepItems;
import io.turnstream.gateway.provider.StepOutcome;
import io.turnstream.gateway.provider.ToolCallRequest;
import io.turnstream.model.Json;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** The simulated provider, read back through the real Anthropic adapter over loopback HTTP. */
class SimulatedAnthropicServerTest {

    private static final StallWatchdog watchdog = new StallWatchdog();

    @AfterAll
    static void stopWatchdog() {
        watchdog.close();
    }

    @Test
    void streamsThinkingTextAndAToolCallAsTheMessagesApiDoes() {
        SimulationScript script = request -> SimulatedReply.answer()
                .thinking("Reading is the way.")
                .text("I will read notes.txt now.")
                .toolUse("read_file", Json.MAPPER.createObjectNode().put("path", "notes.txt"));
        try (SimulatedAnthropicServer server = SimulatedAnthropicServer.start(0, script, 0)) {
            List<StreamPayload> payloads = new ArrayList<>();
            StepOutcome outcome = call(server, payloads);

            assertThat(outcome.status()).isEqualTo(ResponseStatus.COMPLETE);
            assertThat(outcome.finishReason()).isEqualTo(FinishReasons.TOOL_CALLS);
            assertThat(ItemInvariants.shape(payloads)).containsExactly(
                    "item_start s-0 reasoning", "item_delta s-0 x4", "item_done s-0 reasoning",
                    "item_start s-1 message", "item_delta s-1 x5", "item_done s-1 message",
                    "item_start s-2 function_call", "tool_status pending", "item_delta s-2 x2",
                    "item_done s-2 function_call");
            ItemInvariants.assertFinalContentIsTheStreamedText(payloads);
            ToolCallRequest call = outcome.toolCalls().get(0);
            assertThat(call.name()).isEqualTo("read_file");
            assertThat(Json.fromString(call.arguments(), com.fasterxml.jackson.databind.JsonNode.class).get("path").asText())
                    .isEqualTo("notes.txt");
            assertThat(outcome.usage().completionTokens()).as("one per streamed piece").isEqualTo(4 + 5 + 2);
            assertThat(outcome.assistantContent().get(0).get("signature").asText()).isNotEmpty();
        }
    }

    @Test
    void longAnswerHasTheConfiguredLength() {
        try (SimulatedAnthropicServer server = SimulatedAnthropicServer.start(0, SimulationScript.longAnswer(300), 0)) {
            List<StreamPayload> payloads = new ArrayList<>();
            StepOutcome outcome = call(server, payloads);

            String answer = outcome.assistantContent().get(1).get("text").asText();
            assertThat(answer.split(" ")).hasSize(300);
            assertThat(payloads.stream().filter(p -> p instanceof StreamPayload.ItemDelta d && d.itemId().equals("s-1")))
                    .hasSize(300);
        }
    }

    @Test
    void answersHttpErrorsInTheMessagesApiShape() throws Exception {
        SimulationScript script = request -> SimulatedReply.httpError(429, 3, "rate_limit_error", "slow down");
        try (SimulatedAnthropicServer server = SimulatedAnthropicServer.start(0, script, 0)) {
            StepOutcome outcome = call(server, new ArrayList<>());

            assertThat(outcome.error().code()).isEqualTo("rate_limit_error");
            assertThat(outcome.error().message()).isEqualTo("the provider answered HTTP 429: slow down");
            assertThat(outcome.retryAfter()).isEqualTo(Duration.ofSeconds(3));
            assertThat(outcome.retryable()).isTrue();

            HttpResponse<String> notStreaming = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create(server.baseUrl() + "/v1/messages")).POST(HttpRequest.BodyPublishers.ofString("{}")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(notStreaming.statusCode()).isEqualTo(400);
            assertThat(notStreaming.body()).contains("only streams");
        }
    }

    @Test
    void aStalledReplyIsAbandonedByTheStallTimeout() {
        SimulationScript script = request -> SimulatedReply.answer().text(SimulatedText.words(20)).stallAfterTokens(3);
        try (SimulatedAnthropicServer server = SimulatedAnthropicServer.start(0, script, 0)) {
            List<StreamPayload> payloads = new ArrayList<>();
            ProviderClient client = new ProviderClient(ProviderClient.defaultHttpClient(), watchdog, Duration.ofMillis(300));
            StepOutcome outcome = client.call(new AnthropicMessagesAdapter(), new ProviderEndpoint(server.baseUrl(), null),
                    request(), new StepItems("s", "simulated", payloads::add), new CancelSignal());

            assertThat(outcome.error().code()).isEqualTo(ErrorCodes.STREAM_STALLED);
            assertThat(ItemInvariants.shape(payloads)).containsExactly("item_start s-0 message", "item_delta s-0 x3",
                    "item_error s-0");
        }
    }

    private static StepOutcome call(SimulatedAnthropicServer server, List<StreamPayload> payloads) {
        ProviderClient client = new ProviderClient(ProviderClient.defaultHttpClient(), watchdog, Duration.ofSeconds(10));
        StepOutcome outcome = client.call(new AnthropicMessagesAdapter(), new ProviderEndpoint(server.baseUrl(), null),
                request(), new StepItems("s", "simulated", payloads::add), new CancelSignal());
        if (outcome.status() == ResponseStatus.COMPLETE) {
            // as the agent loop does once the step is committed
            outcome.toolCalls().forEach(call -> payloads.add(call.itemDone("simulated")));
        }
        return outcome;
    }

    private static ModelRequest request() {
        return new ModelRequest("sim", null, List.of(new Conversation.UserText("hi")), List.of(), 1024, null);
    }
}
