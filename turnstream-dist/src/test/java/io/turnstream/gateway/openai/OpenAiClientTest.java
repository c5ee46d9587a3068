package io.turnstream.gateway.openai;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.demo.Demo;
import io.turnstream.gateway.NodeScript;
import io.turnstream.gateway.ProviderEndpoints;
import io.turnstream.model.Json;
import io.turnstream.testsupport.UsesBroker;
import io.turnstream.testsupport.UsesNode;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code POST /v1/chat/completions} and {@code POST /v1/responses} driven by the official {@code openai}
 * npm client (pinned in {@code clients/openai}), in one node process, against the whole pipeline in this
 * JVM: embedded broker, upsert topology, tool executor on the demo's workspace, gateway with the
 * simulated provider. The executor's tools run inside a turn; {@code read_file} declared by the client is
 * the client's: the turn returns its call, and the request carrying the result continues the thread.
 */
@UsesBroker
@UsesNode
class OpenAiClientTest {

    private static final Path CLIENT = Path.of("..", "clients", "openai");
    /** What the simulated provider answers after reading the demo workspace's README through the executor. */
    private static final String WORKSPACE_ANSWER = "`README.md` has";
    private static final String CLIENT_FILE_ANSWER = "`notes.md` has 2 lines. It begins with:\n\n> # Launch notes";

    private static Demo demo;
    private static JsonNode result;
    private static final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void runTheClient() throws Exception {
        assertThat(CLIENT.resolve("node_modules/openai/package.json"))
                .as("the openai client is not installed: Maven runs `npm ci` in clients/openai when it builds "
                        + "turnstream-dist's tests (process-test-resources); run it by hand when running the test "
                        + "outside Maven").isRegularFile();
        demo = Demo.start(new Demo.Options(0, ProviderEndpoints.simulatedOnly(null), "simulated", null),
                new PrintWriter(new StringWriter()));
        result = NodeScript.run(CLIENT, "openai.mjs", List.of(demo.gatewayUrl(), ""));
    }

    @AfterAll
    static void stopPipeline() {
        if (demo != null) {
            demo.close();
        }
    }

    @Test
    void chatCompletionsAnswerWithTheTurnAfterTheExecutorsToolsRan() throws Exception {
        JsonNode chat = result.get("chat");
        assertThat(chat.get("object").asText()).isEqualTo("chat.completion");
        assertThat(chat.get("id").asText()).isEqualTo(chat.get("turnId").asText());
        assertThat(chat.get("finishReason").asText()).isEqualTo("stop");
        assertThat(chat.get("content").asText()).contains(WORKSPACE_ANSWER).contains("> # Rocket club flight log");
        assertThat(chat.at("/usage/total_tokens").asLong()).isPositive();
        assertThat(agentMessages(chat.get("turnId").asText())).as("the content is the turn's messages")
                .isEqualTo(chat.get("content").asText());
    }

    @Test
    void aStreamedCompletionCarriesTheSameTextAsTheTurn() throws Exception {
        JsonNode stream = result.get("chatStream");
        assertThat(stream.get("chunks").asInt()).isGreaterThan(3);
        assertThat(stream.get("finishReason").asText()).isEqualTo("stop");
        assertThat(stream.at("/usage/total_tokens").asLong()).isPositive();
        assertThat(stream.get("content").asText()).isEqualTo(agentMessages(stream.get("turnId").asText()))
                .contains(WORKSPACE_ANSWER);
    }

    @Test
    void responsesAnswerAsAResponseAndAsItsEventStream() throws Exception {
        JsonNode whole = result.get("responses");
        assertThat(whole.get("status").asText()).isEqualTo("completed");
        assertThat(strings(whole.get("outputTypes"))).containsOnly("message");
        assertThat(whole.get("outputText").asText()).contains(WORKSPACE_ANSWER);
        assertThat(whole.at("/usage/total_tokens").asLong()).isPositive();

        JsonNode stream = result.get("responsesStream");
        assertThat(strings(stream.get("events"))).startsWith("response.created", "response.in_progress",
                "response.output_item.added", "response.content_part.added").endsWith("response.completed")
                .contains("response.output_text.delta", "response.output_text.done", "response.output_item.done");
        assertThat(stream.get("status").asText()).isEqualTo("completed");
        assertThat(stream.get("text").asText()).contains(WORKSPACE_ANSWER)
                .isEqualTo(String.join("", agentMessageList(stream.get("turnId").asText())));
    }

    @Test
    void aClientSideToolCallEndsTheTurnAndItsResultContinuesTheThread() throws Exception {
        JsonNode chat = result.get("chatToolRoundTrip");
        JsonNode first = chat.get("first");
        assertThat(first.get("finishReason").asText()).isEqualTo("tool_calls");
        assertThat(first.get("toolName").asText()).isEqualTo("read_file");
        assertThat(first.at("/arguments/path").asText()).isEqualTo("notes.md");
        JsonNode second = chat.get("second");
        assertThat(second.get("threadId").asText()).as("the same thread").isEqualTo(first.get("threadId").asText());
        assertThat(second.get("turnId").asText()).isNotEqualTo(first.get("turnId").asText());
        assertThat(second.get("finishReason").asText()).isEqualTo("stop");
        assertThat(second.get("content").asText()).startsWith(CLIENT_FILE_ANSWER);

        JsonNode responses = result.get("responsesToolRoundTrip");
        assertThat(strings(responses.at("/first/outputTypes"))).containsExactly("message", "function_call");
        assertThat(strings(responses.at("/first/events"))).contains("response.function_call_arguments.done")
                .endsWith("response.completed");
        assertThat(responses.at("/first/name").asText()).isEqualTo("read_file");
        assertThat(responses.at("/first/arguments/path").asText()).isEqualTo("notes.md");
        assertThat(responses.at("/second/status").asText()).isEqualTo("completed");
        assertThat(responses.at("/second/outputText").asText()).startsWith(CLIENT_FILE_ANSWER);
    }

    @Test
    void aResponseContinuingThePreviousOneWithAPictureNamesTheOneItContinued() {
        JsonNode continued = result.get("responsesWithPicture");
        assertThat(continued.get("status").asText()).isEqualTo("completed");
        assertThat(continued.get("previousResponseId").asText()).isEqualTo(continued.get("firstId").asText());
        assertThat(continued.get("id").asText()).isNotEqualTo(continued.get("firstId").asText());
    }

    @Test
    void anInvalidRequestIsA400InOpenAisErrorShape() {
        JsonNode refused = result.get("refused");
        assertThat(refused.get("status").asInt()).isEqualTo(400);
        assertThat(refused.get("type").asText()).isEqualTo("invalid_request_error");
        assertThat(refused.get("message").asText()).contains("'messages' must be a non-empty list");
    }

    /** The turn's agent messages from {@code GET /v1/turns/{turnId}}, in order, as Chat Completions joins them. */
    private static String agentMessages(String turnId) throws Exception {
        return String.join("\n\n", agentMessageList(turnId));
    }

    private static List<String> agentMessageList(String turnId) throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(
                URI.create(demo.gatewayUrl() + "/v1/turns/" + turnId)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        return StreamSupport.stream(Json.MAPPER.readTree(response.body()).get("items").spliterator(), false)
                .filter(item -> item.get("itemType").asText().equals("message")
                        && !"user".equals(item.path("origin").asText()))
                .map(item -> item.get("content").asText()).toList();
    }

    private static List<String> strings(JsonNode array) {
        return StreamSupport.stream(array.spliterator(), false).map(JsonNode::asText).toList();
    }
}
