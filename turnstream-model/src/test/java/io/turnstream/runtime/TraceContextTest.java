package io.turnstream.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.Json;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

class TraceContextTest {

    private static final String TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    @Test
    void aValidRequestContextIsKeptWithItsTraceState() {
        TraceContext trace = TraceContext.fromHttp(Map.of("traceparent", TRACEPARENT, "tracestate", "congo=t61rcWkgMzE")::get);

        assertThat(trace).isEqualTo(new TraceContext(TRACEPARENT, "congo=t61rcWkgMzE"));
        assertThat(trace.traceId()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
    }

    @Test
    void aMissingOrMalformedTraceparentStartsAFreshValidTrace() {
        TraceContext none = TraceContext.fromHttp(Map.<String, String>of()::get);
        TraceContext malformed = TraceContext.fromHttp(Map.of("traceparent", "00-not-a-trace-01")::get);
        TraceContext allZero = TraceContext.fromHttp(Map.of("traceparent",
                "00-00000000000000000000000000000000-00f067aa0ba902b7-01")::get);

        for (TraceContext fresh : new TraceContext[] {none, malformed, allZero}) {
            assertThat(fresh.traceparent()).matches("00-[0-9a-f]{32}-[0-9a-f]{16}-01");
            assertThat(fresh.tracestate()).isNull();
        }
        assertThat(none.traceId()).isNotEqualTo(malformed.traceId());
    }

    @Test
    void theContextRoundTripsThroughTheEventFieldAndRecordHeaders() {
        TraceContext trace = new TraceContext(TRACEPARENT, "congo=t61rcWkgMzE");

        assertThat(TraceContext.fromJson(trace.toJson())).isEqualTo(trace);
        Headers headers = trace.addTo(new RecordHeaders().add("traceparent", "stale".getBytes(StandardCharsets.UTF_8)));
        assertThat(headers.headers("traceparent")).hasSize(1);
        assertThat(TraceContext.fromHeaders(headers)).isEqualTo(trace);
    }

    @Test
    void anEventOrRecordWithoutAValidContextHasNone() {
        assertThat(TraceContext.fromJson(null)).isNull();
        assertThat(TraceContext.fromJson(Json.MAPPER.createObjectNode().put("traceparent", "garbage"))).isNull();
        assertThat(TraceContext.fromHeaders(new RecordHeaders())).isNull();
    }
}
