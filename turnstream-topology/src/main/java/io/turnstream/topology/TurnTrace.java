package io.turnstream.topology;

import io.turnstream.model.StreamEvent;
import io.turnstream.runtime.TraceContext;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * Carries a turn's W3C trace context from its {@code response_start} (the event's {@code trace_context},
 * else the record's {@code traceparent} header) to the headers of every record the turn emits, also
 * those a punctuation emits after the input record is gone.
 */
final class TurnTrace {

    private TurnTrace() {
    }

    static void remember(TurnState turn, StreamEvent start, Headers startHeaders) {
        TraceContext trace = TraceContext.fromJson(start.traceContext());
        if (trace == null) {
            trace = TraceContext.fromHeaders(startHeaders);
        }
        if (trace != null) {
            turn.traceparent = trace.traceparent();
            turn.tracestate = trace.tracestate();
        }
    }

    /** Fresh headers for one emitted record: the turn's trace context, or none. */
    static Headers headers(TurnState turn) {
        Headers headers = new RecordHeaders();
        return turn.traceparent == null ? headers : new TraceContext(turn.traceparent, turn.tracestate).addTo(headers);
    }
}
