package io.turnstream.gateway.loop;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * The gateway's counters, served as JSON on {@code GET /metrics} and, through {@link #bindTo}, as
 * Prometheus counters {@code turnstream_gateway_<name>_total}.
 */
public final class GatewayMetrics {

    /** What is counted. */
    public enum Counter {
        TURNS_STARTED, TURNS_COMPLETED, TURNS_FAILED, TURNS_ABORTED, TURNS_REJECTED, TURNS_RESUMED,
        MODEL_CALLS, RETRIES, FALLBACKS, STALLS, COMPACTIONS, PROVIDER_ERRORS,
        TOOL_RESULTS_RECEIVED, EVENTS_PUBLISHED, PUBLISH_FAILURES, BAD_INPUT_RECORDS;

        /** The name in the JSON: lower snake case. */
        public String key() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final Map<Counter, LongAdder> counters = new EnumMap<>(Counter.class);

    public GatewayMetrics() {
        for (Counter counter : Counter.values()) {
            counters.put(counter, new LongAdder());
        }
    }

    public void increment(Counter counter) {
        counters.get(counter).increment();
    }

    public long get(Counter counter) {
        return counters.get(counter).sum();
    }

    /** Registers every counter as a Micrometer counter reading the same adder. */
    public void bindTo(MeterRegistry registry) {
        counters.forEach((counter, adder) -> FunctionCounter.builder("turnstream.gateway." + counter.key().replace('_', '.'),
                adder, LongAdder::sum).register(registry));
    }

    /** Every counter by its JSON name, in declaration order. */
    public Map<String, Long> snapshot() {
        Map<String, Long> values = new LinkedHashMap<>();
        counters.forEach((counter, adder) -> values.put(counter.key(), adder.sum()));
        return values;
    }
}
