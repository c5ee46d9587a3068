package io.turnstream.gateway.sim;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/**
 * What the simulated provider answers to one request: content blocks streamed at a token rate, or
 * an HTTP error. Built fluently: {@code SimulatedReply.answer().thinking("...").text("...")}.
 */
public final class SimulatedReply {

    /** One content block to stream. */
    public sealed interface Block {
    }

    public record Thinking(String text) implements Block {
    }

    public record Text(String text) implements Block {
    }

    public record ToolUse(String name, JsonNode input) implements Block {
    }

    /** An HTTP error instead of a stream, in the Messages API's error shape. */
    public record HttpError(int status, Integer retryAfterSeconds, String type, String message) {
    }

    private final List<Block> blocks = new ArrayList<>();
    private final HttpError error;
    private Double tokensPerSecond;
    private Integer stallAfterTokens;
    private Integer failAfterTokens;
    private String failureType;
    private boolean failAfterBlocks;
    private String stopReason;
    private Usage usage;

    /** Token counts to report instead of the estimate; null fields are left out of the stream. */
    public record Usage(long inputTokens, Long cacheReadInputTokens, Long cacheCreationInputTokens) {
    }

    private SimulatedReply(HttpError error) {
        this.error = error;
    }

    public static SimulatedReply answer() {
        return new SimulatedReply(null);
    }

    /** An HTTP error, e.g. {@code httpError(429, 1, "rate_limit_error", "slow down")}; null retry-after sends none. */
    public static SimulatedReply httpError(int status, Integer retryAfterSeconds, String type, String message) {
        return new SimulatedReply(new HttpError(status, retryAfterSeconds, type, message));
    }

    /** Anthropic's answer to a request whose prompt does not fit the context window. */
    public static SimulatedReply promptTooLong(long promptTokens, long contextWindow) {
        return httpError(400, null, "invalid_request_error",
                "prompt is too long: " + promptTokens + " tokens > " + contextWindow + " maximum");
    }

    /** A summary of a summarisation request's conversation ({@link SimulatedRequest#asksForSummary()}). */
    public static SimulatedReply summaryOf(SimulatedRequest request) {
        String opening = request.firstUserText();
        return answer().text("Summary of " + (request.messageCount() - 1) + " earlier messages. The user asked: "
                + (opening == null ? "(no text)" : opening));
    }

    public SimulatedReply thinking(String text) {
        blocks.add(new Thinking(text));
        return this;
    }

    public SimulatedReply text(String text) {
        blocks.add(new Text(text));
        return this;
    }

    public SimulatedReply toolUse(String name, JsonNode input) {
        blocks.add(new ToolUse(name, input));
        return this;
    }

    /** Overrides the server's token rate for this reply; 0 or less streams as fast as possible. */
    public SimulatedReply tokensPerSecond(double rate) {
        this.tokensPerSecond = rate;
        return this;
    }

    /** Sends this many tokens, then nothing more while keeping the connection open: a stalled stream. */
    public SimulatedReply stallAfterTokens(int tokens) {
        this.stallAfterTokens = tokens;
        return this;
    }

    /**
     * Sends this many tokens, then an in-stream {@code error} event of this type (e.g.
     * {@code overloaded_error}) and ends: a failure after output has started.
     */
    public SimulatedReply failAfterTokens(int tokens, String errorType) {
        this.failAfterTokens = tokens;
        this.failureType = errorType;
        return this;
    }

    /**
     * Sends every block whole, then an in-stream {@code error} event of this type instead of the
     * message's end: a stream that breaks after a complete tool call.
     */
    public SimulatedReply failAfterBlocks(String errorType) {
        this.failAfterBlocks = true;
        this.failureType = errorType;
        return this;
    }

    public boolean failsAfterBlocks() {
        return failAfterBlocks;
    }

    /** The {@code stop_reason} to end with, e.g. {@code max_tokens}; by default end_turn or tool_use. */
    public SimulatedReply stopReason(String reason) {
        this.stopReason = reason;
        return this;
    }

    /** Reports these input token counts (cache reads and writes included) instead of an estimate from the request size. */
    public SimulatedReply usage(long inputTokens, Long cacheReadInputTokens, Long cacheCreationInputTokens) {
        this.usage = new Usage(inputTokens, cacheReadInputTokens, cacheCreationInputTokens);
        return this;
    }

    public Integer failAfterTokens() {
        return failAfterTokens;
    }

    public String failureType() {
        return failureType;
    }

    public String stopReason() {
        return stopReason;
    }

    public Usage usage() {
        return usage;
    }

    public List<Block> blocks() {
        return List.copyOf(blocks);
    }

    public HttpError error() {
        return error;
    }

    public Double tokensPerSecondOverride() {
        return tokensPerSecond;
    }

    public Integer stallAfterTokens() {
        return stallAfterTokens;
    }

    public boolean callsTools() {
        return blocks.stream().anyMatch(b -> b instanceof ToolUse);
    }
}
