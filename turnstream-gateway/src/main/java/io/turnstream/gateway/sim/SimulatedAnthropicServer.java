package io.turnstream.gateway.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.turnstream.gateway.sse.SseEvent;
import io.turnstream.gateway.sse.SseFormat;
import io.turnstream.model.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A model provider that speaks Anthropic's Messages streaming protocol over real HTTP on loopback,
 * answering what a {@link SimulationScript} decides: thinking, text and tool calls, paced at a token
 * rate, or HTTP errors and stalls for resilience tests. It is the gateway's provider when no API key
 * is configured, and the demo's and the benchmarks' model.
 *
 * <pre>{@code
 * try (SimulatedAnthropicServer sim = SimulatedAnthropicServer.start(0)) {
 *     String baseUrl = sim.baseUrl();   // use as ANTHROPIC_BASE_URL
 * }
 * }</pre>
 */
public final class SimulatedAnthropicServer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(SimulatedAnthropicServer.class);

    /** A pleasant reading pace for the demo. */
    public static final double DEFAULT_TOKENS_PER_SECOND = 40;
    public static final int DEFAULT_ANSWER_TOKENS = 200;
    private static final int JSON_CHUNK = 12;

    private final HttpServer server;
    private final ExecutorService executor = Executors.newCachedThreadPool(r -> {
        Thread thread = new Thread(r, "simulated-provider");
        thread.setDaemon(true);
        return thread;
    });
    private final SimulationScript script;
    private final double tokensPerSecond;
    private final AtomicInteger requests = new AtomicInteger();
    private final AtomicInteger messageIds = new AtomicInteger();
    private final CountDownLatch closing = new CountDownLatch(1);

    private SimulatedAnthropicServer(int port, SimulationScript script, double tokensPerSecond) {
        this.script = script;
        this.tokensPerSecond = tokensPerSecond;
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 0);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the simulated provider on port " + port, e);
        }
        server.createContext("/v1/messages", this::messages);
        server.setExecutor(executor);
        server.start();
    }

    /** The demo's agent ({@link SimulationScript#workspaceTour(int)}) at the default pace; port 0 for a free one. */
    public static SimulatedAnthropicServer start(int port) {
        return start(port, SimulationScript.workspaceTour(DEFAULT_ANSWER_TOKENS), DEFAULT_TOKENS_PER_SECOND);
    }

    /** @param tokensPerSecond 0 or less streams as fast as possible */
    public static SimulatedAnthropicServer start(int port, SimulationScript script, double tokensPerSecond) {
        return new SimulatedAnthropicServer(port, script, tokensPerSecond);
    }

    /** The base URL to configure as the Anthropic base URL (the API path {@code /v1/messages} is below it). */
    public String baseUrl() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** How many requests the server has received. */
    public int requests() {
        return requests.get();
    }

    @Override
    public void close() {
        closing.countDown();
        server.stop(0);
        executor.shutdownNow();
    }

    private void messages(HttpExchange exchange) throws IOException {
        try (exchange) {
            if (!"POST".equals(exchange.getRequestMethod())) {
                error(exchange, 405, null, "invalid_request_error", "use POST");
                return;
            }
            JsonNode body;
            try (InputStream in = exchange.getRequestBody()) {
                body = Json.MAPPER.readTree(in);
            } catch (IOException e) {
                error(exchange, 400, null, "invalid_request_error", "the body is not JSON: " + e.getMessage());
                return;
            }
            if (body == null || !body.path("stream").asBoolean(false)) {
                error(exchange, 400, null, "invalid_request_error", "the simulated provider only streams: set stream to true");
                return;
            }
            SimulatedRequest request = new SimulatedRequest(requests.incrementAndGet(), body);
            SimulatedReply reply = script.reply(request);
            if (reply.error() != null) {
                SimulatedReply.HttpError e = reply.error();
                error(exchange, e.status(), e.retryAfterSeconds(), e.type(), e.message());
                return;
            }
            stream(exchange, request, reply);
        } catch (IOException clientGone) {
            LOG.debug("simulated provider: client went away: {}", clientGone.getMessage());
        }
    }

    private static void error(HttpExchange exchange, int status, Integer retryAfterSeconds, String type, String message)
            throws IOException {
        ObjectNode body = Json.MAPPER.createObjectNode().put("type", "error");
        body.putObject("error").put("type", type).put("message", message);
        byte[] bytes = Json.toBytes(body);
        exchange.getResponseHeaders().add("content-type", "application/json");
        if (retryAfterSeconds != null) {
            exchange.getResponseHeaders().add("retry-after", retryAfterSeconds.toString());
        }
        exchange.sendResponseHeaders(status, bytes.length);
        exchange.getResponseBody().write(bytes);
    }

    private void stream(HttpExchange exchange, SimulatedRequest request, SimulatedReply reply) throws IOException {
        exchange.getResponseHeaders().add("content-type", "text/event-stream");
        exchange.getResponseHeaders().add("cache-control", "no-cache");
        exchange.sendResponseHeaders(200, 0);
        double rate = reply.tokensPerSecondOverride() != null ? reply.tokensPerSecondOverride() : tokensPerSecond;
        Emitter out = new Emitter(exchange.getResponseBody(), rate, reply.stallAfterTokens(), reply.failAfterTokens());

        int messageNumber = messageIds.incrementAndGet();
        ObjectNode message = Json.MAPPER.createObjectNode()
                .put("id", "msg_sim_" + messageNumber).put("type", "message").put("role", "assistant")
                .put("model", request.model());
        message.putArray("content");
        message.putNull("stop_reason");
        ObjectNode usage = message.putObject("usage");
        SimulatedReply.Usage reported = reply.usage();
        if (reported == null) {
            usage.put("input_tokens", Math.max(1, request.body().toString().length() / 4));
        } else {
            // Anthropic counts cached input apart from input_tokens
            long cached = Objects.requireNonNullElse(reported.cacheReadInputTokens(), 0L)
                    + Objects.requireNonNullElse(reported.cacheCreationInputTokens(), 0L);
            usage.put("input_tokens", reported.inputTokens() - cached);
            if (reported.cacheReadInputTokens() != null) {
                usage.put("cache_read_input_tokens", reported.cacheReadInputTokens());
            }
            if (reported.cacheCreationInputTokens() != null) {
                usage.put("cache_creation_input_tokens", reported.cacheCreationInputTokens());
            }
        }
        usage.put("output_tokens", 1);
        out.event("message_start", Json.MAPPER.createObjectNode().put("type", "message_start").set("message", message));

        int index = 0;
        for (SimulatedReply.Block block : reply.blocks()) {
            // call ids must be unique across turns: llm.tool-results may be compacted by call id
            String toolIdPrefix = "toolu_sim_" + UUID.randomUUID().toString().replace("-", "").substring(0, 20) + "_";
            if (!streamBlock(out, toolIdPrefix, index++, block)) {
                if (out.failing()) {
                    failure(out, reply);
                    return;
                }
                holdUntilClosed();
                return;
            }
        }
        if (reply.failsAfterBlocks()) {
            failure(out, reply);
            return;
        }
        String stopReason = reply.stopReason() != null ? reply.stopReason() : reply.callsTools() ? "tool_use" : "end_turn";
        ObjectNode delta = Json.MAPPER.createObjectNode().put("type", "message_delta");
        delta.putObject("delta").put("stop_reason", stopReason).putNull("stop_sequence");
        delta.putObject("usage").put("output_tokens", out.tokens);
        out.event("message_delta", delta);
        out.event("message_stop", Json.MAPPER.createObjectNode().put("type", "message_stop"));
    }

    private static void failure(Emitter out, SimulatedReply reply) throws IOException {
        ObjectNode error = Json.MAPPER.createObjectNode().put("type", "error");
        error.putObject("error").put("type", reply.failureType()).put("message", "simulated " + reply.failureType());
        out.event("error", error);
    }

    /** @return false when the reply stalls or fails inside this block */
    private static boolean streamBlock(Emitter out, String toolIdPrefix, int index, SimulatedReply.Block block)
            throws IOException {
        ObjectNode start = Json.MAPPER.createObjectNode().put("type", "content_block_start").put("index", index);
        ObjectNode content = start.putObject("content_block");
        String deltaType;
        String field;
        List<String> pieces;
        if (block instanceof SimulatedReply.Thinking thinking) {
            content.put("type", "thinking").put("thinking", "").put("signature", "");
            deltaType = "thinking_delta";
            field = "thinking";
            pieces = SimulatedText.tokens(thinking.text());
        } else if (block instanceof SimulatedReply.Text text) {
            content.put("type", "text").put("text", "");
            deltaType = "text_delta";
            field = "text";
            pieces = SimulatedText.tokens(text.text());
        } else {
            SimulatedReply.ToolUse tool = (SimulatedReply.ToolUse) block;
            content.put("type", "tool_use").put("id", toolIdPrefix + index).put("name", tool.name()).putObject("input");
            deltaType = "input_json_delta";
            field = "partial_json";
            pieces = chunks(Json.toString(tool.input()));
        }
        out.event("content_block_start", start);
        for (String piece : pieces) {
            if (!out.tokenAllowed()) {
                return false;
            }
            ObjectNode delta = Json.MAPPER.createObjectNode().put("type", "content_block_delta").put("index", index);
            delta.putObject("delta").put("type", deltaType).put(field, piece);
            out.token("content_block_delta", delta);
        }
        if (block instanceof SimulatedReply.Thinking) {
            ObjectNode signature = Json.MAPPER.createObjectNode().put("type", "content_block_delta").put("index", index);
            signature.putObject("delta").put("type", "signature_delta").put("signature", "c2ltdWxhdGVkLXNpZ25hdHVyZQ==");
            out.event("content_block_delta", signature);
        }
        out.event("content_block_stop", Json.MAPPER.createObjectNode().put("type", "content_block_stop").put("index", index));
        return true;
    }

    private static List<String> chunks(String json) {
        List<String> chunks = new java.util.ArrayList<>();
        for (int i = 0; i < json.length(); i += JSON_CHUNK) {
            chunks.add(json.substring(i, Math.min(json.length(), i + JSON_CHUNK)));
        }
        return chunks;
    }

    /** A stalled reply keeps its connection open and silent until the client hangs up or the server closes. */
    private void holdUntilClosed() {
        try {
            closing.await(10, TimeUnit.MINUTES);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Writes events, pacing tokens at a rate measured from the first token (no drift). */
    private static final class Emitter {
        private final OutputStream out;
        private final long nanosPerToken;
        private final Integer stallAfter;
        private final Integer failAfter;
        private long firstTokenAt;
        int tokens;

        Emitter(OutputStream out, double tokensPerSecond, Integer stallAfter, Integer failAfter) {
            this.out = out;
            this.nanosPerToken = tokensPerSecond > 0 ? (long) (1_000_000_000L / tokensPerSecond) : 0;
            this.stallAfter = stallAfter;
            this.failAfter = failAfter;
        }

        boolean tokenAllowed() {
            return (stallAfter == null || tokens < stallAfter) && !failing();
        }

        /** The reply's failure point is reached: what follows is its error event. */
        boolean failing() {
            return failAfter != null && tokens >= failAfter;
        }

        void token(String name, ObjectNode data) throws IOException {
            if (tokens == 0) {
                firstTokenAt = System.nanoTime();
            } else if (nanosPerToken > 0) {
                long due = firstTokenAt + tokens * nanosPerToken;
                for (long wait = due - System.nanoTime(); wait > 0; wait = due - System.nanoTime()) {
                    LockSupport.parkNanos(wait);
                    if (Thread.currentThread().isInterrupted()) {
                        throw new IOException("the simulated provider is shutting down");
                    }
                }
            }
            tokens++;
            event(name, data);
        }

        void event(String name, ObjectNode data) throws IOException {
            out.write(SseFormat.format(new SseEvent(name, Json.toString(data))));
            out.flush();
        }
    }
}
