package io.turnstream.gateway.chat;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.demo.Demo;
import io.turnstream.gateway.NodeScript;
import io.turnstream.gateway.ProviderEndpoints;
import io.turnstream.model.Json;
import io.turnstream.testsupport.UsesBroker;
import io.turnstream.testsupport.UsesNode;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code POST /api/chat} and {@code GET /api/chat/{chatId}/stream} driven by the Vercel AI SDK itself:
 * the pinned {@code ai} npm package in {@code clients/ai-sdk} (its {@code DefaultChatTransport} and
 * {@code readUIMessageStream}, run by node) against the whole pipeline in this JVM: embedded broker,
 * upsert topology, tool executor on the demo's workspace, gateway with the simulated provider.
 */
@UsesBroker
@UsesNode
class AiSdkChatTest {

    /** The repository's {@code clients/ai-sdk}; tests run in the module's directory. */
    private static final Path CLIENT = Path.of("..", "clients", "ai-sdk");
    private static final String PROMPT = "What is in this workspace?";

    private static Demo demo;
    private static final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void startPipeline() {
        assertThat(CLIENT.resolve("node_modules/ai/package.json"))
                .as("the AI SDK client is not installed: Maven runs `npm ci` in clients/ai-sdk when it builds "
                        + "turnstream-dist's tests (process-test-resources); run it by hand when running the test "
                        + "outside Maven").isRegularFile();
        demo = Demo.start(new Demo.Options(0, ProviderEndpoints.simulatedOnly(null), "simulated", null),
                new PrintWriter(new StringWriter()));
    }

    @AfterAll
    static void stopPipeline() {
        if (demo != null) {
            demo.close();
        }
    }

    @Test
    void aTurnWithReasoningTextAndToolCallsArrivesAsOneUiMessage() throws Exception {
        String chatId = newChatId();

        JsonNode result = node("send", chatId, PROMPT);

        assertThat(result.get("statuses")).extracting(JsonNode::asInt).containsExactly(200);
        assertThat(result.get("errors")).isEmpty();
        assertThat(result.get("messageIds")).hasSize(1);
        JsonNode message = result.get("message");
        assertThat(message.get("role").asText()).isEqualTo("assistant");
        assertThat(partTypes(message)).containsExactly(
                "step-start", "reasoning", "text", "tool-list_files",
                "step-start", "reasoning", "text", "tool-read_file",
                "step-start", "text");
        JsonNode listing = toolPart(message, "tool-list_files");
        assertThat(listing.get("state").asText()).isEqualTo("output-available");
        assertThat(listing.at("/input/path").asText()).isEqualTo(".");
        assertThat(listing.get("output").asText()).contains("README.md", "flights.csv");
        JsonNode reading = toolPart(message, "tool-read_file");
        assertThat(reading.at("/input/path").asText()).isEqualTo("README.md");
        assertThat(reading.get("output").asText()).startsWith("# Rocket club flight log");
        assertThat(lastText(message)).startsWith("`README.md` has").contains("> # Rocket club flight log");

        JsonNode turn = snapshot(message.get("id").asText());
        assertThat(turn.get("threadId").asText()).as("the chat id is the thread").isEqualTo(chatId);
        assertThat(texts(message)).as("every reasoning and text part is its item's final content, once")
                .containsExactlyElementsOf(streamedContents(turn));
        assertThat(message.at("/metadata/turnId").asText()).isEqualTo(turn.get("turnId").asText());
        List<String> chunks = strings(result.get("chunks"));
        assertThat(chunks).startsWith("start", "start-step").endsWith("finish-step", "finish")
                .contains("reasoning-delta", "text-delta", "tool-output-available")
                .containsSubsequence("tool-input-start", "tool-input-delta", "tool-input-available");
        assertThat(dataParts(message, "data-tool-status")).as("each call's latest status, one part per call")
                .extracting(part -> part.at("/data/toolName").asText() + " " + part.at("/data/status").asText())
                .containsExactly("list_files completed", "read_file completed");
        assertThat(dataParts(message, "data-turn-status")).as("the latest turn status").singleElement()
                .satisfies(part -> assertThat(part.at("/data/status").asText()).isEqualTo("step_completed"));
    }

    @Test
    void aDroppedConnectionResumesIntoTheSameMessageWithNothingDoubled() throws Exception {
        String chatId = newChatId();

        JsonNode result = node("resume", chatId, PROMPT);

        assertThat(result.get("statuses")).extracting(JsonNode::asInt).as("the chat, then the resume")
                .containsExactly(200, 200);
        assertThat(strings(result.get("firstChunks"))).contains("start", "text-delta").doesNotContain("finish");
        assertThat(result.get("messageIds")).as("one message").hasSize(1);
        JsonNode message = result.get("message");
        assertThat(partTypes(message)).containsExactly(
                "step-start", "reasoning", "text", "tool-list_files",
                "step-start", "reasoning", "text", "tool-read_file",
                "step-start", "text");
        JsonNode turn = snapshot(message.get("id").asText());
        assertThat(texts(message)).containsExactlyElementsOf(streamedContents(turn));
        assertThat(strings(result.get("chunks"))).startsWith("start").endsWith("finish")
                .filteredOn("start"::equals).hasSize(1);
    }

    @Test
    void aMalformedRequestIsRefusedWithA4xxThatSaysWhatToFix() throws Exception {
        JsonNode result = node("malformed", null, null);

        assertThat(result.get("statuses")).extracting(JsonNode::asInt).containsExactly(400);
        assertThat(result.get("error").asText()).contains("'messages' must be a non-empty list");
    }

    @Test
    void theAnswerSpeaksUiMessageStreamV1AndAChatWithNoRunningTurnHasNothingToResume() throws Exception {
        HttpResponse<java.io.InputStream> response = http.send(HttpRequest.newBuilder(
                        URI.create(demo.gatewayUrl() + "/api/chat")).header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"id\": \"" + newChatId() + "\", \"trigger\": "
                        + "\"submit-message\", \"messages\": [{\"role\": \"user\", \"content\": \"Hello\"}]}"))
                .build(), HttpResponse.BodyHandlers.ofInputStream());
        try (var body = response.body()) {
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.headers().firstValue("x-vercel-ai-ui-message-stream")).hasValue("v1");
            assertThat(response.headers().firstValue("content-type")).hasValueSatisfying(
                    type -> assertThat(type).startsWith("text/event-stream"));
        }

        HttpResponse<String> resume = http.send(HttpRequest.newBuilder(
                URI.create(demo.gatewayUrl() + "/api/chat/" + newChatId() + "/stream")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(resume.statusCode()).isEqualTo(204);
    }

    /** Runs the AI SDK client script and returns what it printed. */
    private static JsonNode node(String command, String chatId, String prompt) throws Exception {
        List<String> args = new ArrayList<>(List.of(command, demo.gatewayUrl()));
        if (chatId != null) {
            args.add(chatId);
            args.add(prompt);
        }
        return NodeScript.run(CLIENT, "chat.mjs", args);
    }

    private static JsonNode snapshot(String turnId) throws IOException, InterruptedException {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(
                URI.create(demo.gatewayUrl() + "/v1/turns/" + turnId)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        return Json.MAPPER.readTree(response.body());
    }

    /** The final content of the turn's reasoning and agent messages, in stream order. */
    private static List<String> streamedContents(JsonNode turn) {
        return StreamSupport.stream(turn.get("items").spliterator(), false)
                .filter(item -> item.get("itemType").asText().equals("reasoning")
                        || (item.get("itemType").asText().equals("message") && !"user".equals(item.path("origin").asText())))
                .map(item -> item.get("content").asText()).toList();
    }

    /** The message's parts but the data parts (statuses), in order. */
    private static List<String> partTypes(JsonNode message) {
        return StreamSupport.stream(message.get("parts").spliterator(), false).map(p -> p.get("type").asText())
                .filter(type -> !type.startsWith("data-")).toList();
    }

    private static List<JsonNode> dataParts(JsonNode message, String type) {
        return StreamSupport.stream(message.get("parts").spliterator(), false)
                .filter(p -> p.get("type").asText().equals(type)).toList();
    }

    private static List<String> texts(JsonNode message) {
        return StreamSupport.stream(message.get("parts").spliterator(), false)
                .filter(p -> p.get("type").asText().equals("text") || p.get("type").asText().equals("reasoning"))
                .map(p -> p.get("text").asText()).toList();
    }

    private static String lastText(JsonNode message) {
        List<String> texts = StreamSupport.stream(message.get("parts").spliterator(), false)
                .filter(p -> p.get("type").asText().equals("text")).map(p -> p.get("text").asText()).toList();
        return texts.get(texts.size() - 1);
    }

    private static JsonNode toolPart(JsonNode message, String type) {
        return StreamSupport.stream(message.get("parts").spliterator(), false)
                .filter(p -> p.get("type").asText().equals(type)).findFirst().orElseThrow();
    }

    private static List<String> strings(JsonNode array) {
        return StreamSupport.stream(array.spliterator(), false).map(JsonNode::asText).toList();
    }

    private static String newChatId() {
        return "chat-" + UUID.randomUUID();
    }
}
