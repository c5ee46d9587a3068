package io.turnstream.gateway.provider;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.Headers;
import io.turnstream.model.Json;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** The recorded provider streams of {@code src/test/resources/provider-sse}, played through the real adapters. */
final class RecordedStreams implements AutoCloseable {

    static final String RUN = "run-1";
    static final String STEP = RUN + "-s1";

    static final List<String> ALL = List.of(
            "anthropic-docs-basic.sse",
            "anthropic-docs-extended-thinking.sse",
            "anthropic-docs-tool-use.sse",
            "anthropic-docs-web-search-ELIDED.sse",
            "anthropic-pysdk-basic_response.sse",
            "anthropic-pysdk-compaction_response.sse",
            "anthropic-pysdk-fable-stream-a-refusal.sse",
            "anthropic-pysdk-fable-stream-b-fallback.sse",
            "anthropic-pysdk-fallback_credit_response.sse",
            "anthropic-pysdk-fallback_response.sse",
            "anthropic-pysdk-refusal_response.sse",
            "anthropic-pysdk-tool_use_response.sse",
            "anthropic-turnstream-SYNTH-message-start-text-and-call.sse",
            "anthropic-turnstream-SYNTH-pause-turn-continued.sse",
            "openai-chat-length.sse",
            "openai-chat-multi-choice.sse",
            "openai-chat-refusal.sse",
            "openai-chat-text.sse",
            "openai-chat-tool-call.sse",
            "vercel-anthropic-SYNTH-duplicate-message-start.sse",
            "vercel-anthropic-SYNTH-message-start-prepopulated.sse",
            "vercel-anthropic-SYNTH-spliced-message-start.sse",
            "vercel-anthropic-fallback-block.sse",
            "vercel-anthropic-json-tool.sse",
            "vercel-anthropic-refusal.sse",
            "vercel-anthropic-text.sse",
            "vercel-anthropic-thinking-signature.sse",
            "vercel-anthropic-tool-no-args.sse",
            "vercel-chat-azure-prompt-filter.sse",
            "vercel-chat-openai-text-long.sse",
            "vercel-mistral-reasoning-parts.sse",
            "vercel-responses-SYNTH-custom-tool.sse",
            "vercel-responses-copilot-id-rotation.sse",
            "vercel-responses-error-insufficient-quota.sse",
            "vercel-responses-reasoning-fc-part1.sse",
            "vercel-responses-reasoning-fc-part4.sse",
            "vercel-responses-web-search.sse");

    /** What one stream produced. */
    record Played(String fixture, List<StreamPayload> payloads, StepOutcome outcome, JsonNode request,
                  Headers requestHeaders) {
    }

    private final RecordedStreamServer server = new RecordedStreamServer();
    private final StallWatchdog watchdog = new StallWatchdog();
    private final HttpClient http = ProviderClient.defaultHttpClient();

    static ProviderAdapter adapterFor(String fixture) {
        if (fixture.startsWith("anthropic-") || fixture.startsWith("vercel-anthropic-")) {
            return new AnthropicMessagesAdapter();
        }
        if (fixture.startsWith("openai-chat-") || fixture.startsWith("vercel-chat-")
                || fixture.startsWith("vercel-mistral-")) {
            return new OpenAiChatAdapter();
        }
        return new OpenAiResponsesAdapter();
    }

    private static String providerId(ProviderAdapter adapter) {
        if (adapter instanceof AnthropicMessagesAdapter) {
            return AnthropicMessagesAdapter.ID;
        }
        return adapter instanceof OpenAiChatAdapter ? OpenAiChatAdapter.ID : OpenAiResponsesAdapter.ID;
    }

    static byte[] bytes(String fixture) {
        try (InputStream in = RecordedStreams.class.getResourceAsStream("/provider-sse/" + fixture)) {
            if (in == null) {
                throw new IllegalArgumentException("no fixture " + fixture);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Stream<String> all() {
        return ALL.stream();
    }

    Played play(String fixture) {
        return play(fixture, adapterFor(fixture), simpleRequest(), bytes(fixture));
    }

    /** Serves {@code body} under {@code name} and reads it through {@code adapter}. */
    Played play(String name, byte[] body, ProviderAdapter adapter, ModelRequest request) {
        return play(name, adapter, request, body);
    }

    /** Serves {@code bodies} in turn under {@code name} and reads them through {@code adapter} as one step. */
    Played play(String name, ProviderAdapter adapter, ModelRequest request, byte[]... bodies) {
        String baseUrl = server.register(name, bodies);
        List<StreamPayload> payloads = new ArrayList<>();
        StepItems items = new StepItems(STEP, providerId(adapter), payloads::add);
        ProviderClient client = new ProviderClient(http, watchdog, Duration.ofSeconds(20));
        StepOutcome outcome = client.call(adapter, new ProviderEndpoint(baseUrl, "test-key"), request, items,
                new CancelSignal());
        if (outcome.status() == ResponseStatus.COMPLETE) {
            // as the agent loop does once the step is committed
            outcome.toolCalls().forEach(call -> payloads.add(call.itemDone(providerId(adapter))));
        }
        return new Played(name, payloads, outcome, Json.fromString(new String(server.lastRequest(name),
                StandardCharsets.UTF_8), JsonNode.class), server.lastHeaders(name));
    }

    static ModelRequest simpleRequest() {
        return new ModelRequest("test-model", null, List.of(new Conversation.UserText("hello")), InstalledTools.ALL,
                1024, null);
    }

    @Override
    public void close() {
        server.close();
        watchdog.close();
    }
}
