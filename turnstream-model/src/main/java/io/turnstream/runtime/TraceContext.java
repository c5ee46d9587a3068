package io.turnstream.runtime;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanId;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceId;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * The W3C trace context of a turn ({@code traceparent}, optional {@code tracestate}), parsed and
 * written by OpenTelemetry's {@link W3CTraceContextPropagator}. It travels from the HTTP request
 * that starts a turn into the {@code trace_context} field of every raw event and, as record headers
 * of the same names, onto the upserts, item-state records, tool calls and tool results the turn causes.
 */
public record TraceContext(String traceparent, String tracestate) {

    public static final String TRACEPARENT = "traceparent";
    public static final String TRACESTATE = "tracestate";

    private static final W3CTraceContextPropagator PROPAGATOR = W3CTraceContextPropagator.getInstance();

    /** Reads from any case-insensitive carrier: HTTP headers, a JSON object's fields. */
    private static final TextMapGetter<Function<String, String>> LOOKUP = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Function<String, String> carrier) {
            return PROPAGATOR.fields();
        }

        @Override
        public String get(Function<String, String> carrier, String key) {
            return carrier == null ? null : carrier.apply(key);
        }
    };

    /** The request's context when it carries a valid {@code traceparent}, else a fresh trace, so what follows still correlates. */
    public static TraceContext fromHttp(Function<String, String> header) {
        TraceContext found = extract(header);
        return found != null ? found : fresh();
    }

    /** A new trace id and parent id, sampled. */
    public static TraceContext fresh() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        SpanContext span;
        do {
            span = SpanContext.create(TraceId.fromLongs(random.nextLong(), random.nextLong()),
                    SpanId.fromLong(random.nextLong()), TraceFlags.getSampled(), TraceState.getDefault());
        } while (!span.isValid());
        return of(span);
    }

    /** From a StreamEvent's {@code trace_context} object; null when absent or not a valid context. */
    public static TraceContext fromJson(JsonNode json) {
        if (json == null || !json.isObject()) {
            return null;
        }
        return extract(key -> json.hasNonNull(key) ? json.get(key).asText() : null);
    }

    /** From a record's headers; null when they carry none. */
    public static TraceContext fromHeaders(Headers headers) {
        return extract(key -> {
            Header header = headers.lastHeader(key);
            return header == null || header.value() == null ? null : new String(header.value(), StandardCharsets.UTF_8);
        });
    }

    private static TraceContext extract(Function<String, String> carrier) {
        SpanContext span = Span.fromContext(PROPAGATOR.extract(Context.root(), carrier, LOOKUP)).getSpanContext();
        return span.isValid() ? of(span) : null;
    }

    private static TraceContext of(SpanContext span) {
        Map<String, String> fields = new LinkedHashMap<>();
        PROPAGATOR.inject(Context.root().with(Span.wrap(span)), fields, Map::put);
        return new TraceContext(fields.get(TRACEPARENT), fields.get(TRACESTATE));
    }

    /** As an OpenTelemetry context whose span is this one (remote), the parent of the spans made for the turn. */
    public Context context() {
        return PROPAGATOR.extract(Context.root(), key -> TRACEPARENT.equals(key) ? traceparent
                : TRACESTATE.equals(key) ? tracestate : null, LOOKUP);
    }

    /** The 32-hex trace id. */
    public String traceId() {
        return traceparent.split("-")[1];
    }

    /** The {@code trace_context} object of a StreamEvent. */
    public JsonNode toJson() {
        ObjectNode json = JsonNodeFactory.instance.objectNode();
        json.put(TRACEPARENT, traceparent);
        if (tracestate != null) {
            json.put(TRACESTATE, tracestate);
        }
        return json;
    }

    /** Sets the {@code traceparent} (and {@code tracestate}) headers, replacing any there. */
    public Headers addTo(Headers headers) {
        headers.remove(TRACEPARENT);
        headers.remove(TRACESTATE);
        headers.add(TRACEPARENT, traceparent.getBytes(StandardCharsets.UTF_8));
        if (tracestate != null) {
            headers.add(TRACESTATE, tracestate.getBytes(StandardCharsets.UTF_8));
        }
        return headers;
    }
}
