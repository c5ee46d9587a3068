package io.turnstream.gateway.loop;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload.Usage;
import java.time.Duration;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * The gateway's counters, served as JSON on {@code GET /metrics} and, through {@link #bindTo}, as
 * Prometheus counters {@code turnstream_gateway_<name>_total}; and, on the registries bound, latency
 * histograms (Prometheus {@code _seconds} buckets) of time to first token, model steps, tool calls
 * and turns, and token and cost counters by provider, model and tenant. It also carries the turns'
 * OpenTelemetry spans ({@link TurnTracing}; none until {@link #traceWith}).
 */
public final class GatewayMetrics {

    /** What is counted. */
    public enum Counter {
        TURNS_STARTED, TURNS_COMPLETED, TURNS_FAILED, TURNS_ABORTED, TURNS_REJECTED, TURNS_RESUMED,
        MODEL_CALLS, RETRIES, FALLBACKS, STALLS, COMPACTIONS, PROVIDER_ERRORS,
        TOOL_RESULTS_RECEIVED, EVENTS_PUBLISHED, PUBLISH_FAILURES, BAD_INPUT_RECORDS,
        /** SSE clients closed because they fell too far behind (they resume with Last-Event-ID). */
        SSE_STREAMS_FELL_BEHIND;

        /** The name in the JSON: lower snake case. */
        public String key() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Tokens by kind, as {@code turnstream_gateway_tokens_total{kind=...}}. */
    private static final String TOKENS = "turnstream.gateway.tokens";
    private static final String COST = "turnstream.gateway.cost.usd";

    private final Map<Counter, LongAdder> counters = new EnumMap<>(Counter.class);
    /**
     * Tagged meters are made here and reach every registry bound; what is recorded before the first
     * bind is not kept (the gateway binds its registry when it starts, before any turn runs).
     */
    private final CompositeMeterRegistry meters = new CompositeMeterRegistry();

    public GatewayMetrics() {
        for (Counter counter : Counter.values()) {
            counters.put(counter, new LongAdder());
        }
    }

    private volatile TurnTracing tracing = TurnTracing.off();

    /** The spans of the turns that start from now on go through this. */
    public void traceWith(TurnTracing tracing) {
        this.tracing = tracing;
    }

    public TurnTracing tracing() {
        return tracing;
    }

    public void increment(Counter counter) {
        counters.get(counter).increment();
    }

    public long get(Counter counter) {
        return counters.get(counter).sum();
    }

    /** Registers every counter as a Micrometer counter reading the same adder, and the histograms and usage counters. */
    public void bindTo(MeterRegistry registry) {
        counters.forEach((counter, adder) -> FunctionCounter.builder("turnstream.gateway." + counter.key().replace('_', '.'),
                adder, LongAdder::sum).register(registry));
        meters.add(registry);
    }

    /** From the start of a model step (a call, with its retries) to its first streamed item or text. */
    public void timeToFirstToken(String provider, String model, Duration elapsed) {
        timer("turnstream.gateway.time.to.first.token", "from a model step's start to its first streamed output",
                Tags.of("provider", provider, "model", model)).record(elapsed);
    }

    /** One model step, its retries and pause continuations included. */
    public void step(String provider, String model, ResponseStatus status, Duration elapsed) {
        timer("turnstream.gateway.step.duration", "a model step, retries included",
                Tags.of("provider", provider, "model", model, "status", status.wire())).record(elapsed);
    }

    /** From a tool call's end in the model's output to its result reaching the gateway. */
    public void toolCall(String tool, boolean success, Duration elapsed) {
        timer("turnstream.gateway.tool.duration", "from a tool call to its result",
                Tags.of("tool", tool, "success", String.valueOf(success))).record(elapsed);
    }

    /** A turn on this gateway, from its start (or takeover) to its end. */
    public void turn(String provider, String tenant, ResponseStatus status, Duration elapsed) {
        timer("turnstream.gateway.turn.duration", "a turn on this gateway",
                Tags.of("provider", provider, "tenant", tenant, "status", status.wire())).record(elapsed);
    }

    /**
     * A model call's tokens by kind, and its cost when the model has a price; {@code call} tells a failed call's
     * ({@code failed}: made again, or ending its step) from the others' ({@code completed}).
     */
    public void usage(String provider, String model, String tenant, Usage usage, boolean failed) {
        Tags tags = Tags.of("provider", provider, "model", model, "tenant", tenant, "call", failed ? "failed" : "completed");
        tokens(tags, "prompt", usage.promptTokens());
        tokens(tags, "completion", usage.completionTokens());
        tokens(tags, "cache_read", usage.cacheReadTokens());
        tokens(tags, "cache_write", usage.cacheWriteTokens());
        tokens(tags, "reasoning", usage.reasoningTokens());
        if (usage.costUsd() != null) {
            io.micrometer.core.instrument.Counter.builder(COST).description("model cost in US dollars")
                    .tags(tags).register(meters).increment(usage.costUsd());
        }
    }

    private void tokens(Tags tags, String kind, Long count) {
        if (count != null && count > 0) {
            io.micrometer.core.instrument.Counter.builder(TOKENS).description("model tokens by kind")
                    .tags(tags).tag("kind", kind).register(meters).increment(count);
        }
    }

    private Timer timer(String name, String description, Tags tags) {
        return Timer.builder(name).description(description).tags(tags).publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofMillis(5)).maximumExpectedValue(Duration.ofMinutes(10))
                .register(meters);
    }

    /** Every counter by its JSON name, in declaration order. */
    public Map<String, Long> snapshot() {
        Map<String, Long> values = new LinkedHashMap<>();
        counters.forEach((counter, adder) -> values.put(counter.key(), adder.sum()));
        return values;
    }
}
