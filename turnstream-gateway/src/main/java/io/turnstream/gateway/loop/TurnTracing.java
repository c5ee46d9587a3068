package io.turnstream.gateway.loop;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import io.turnstream.gateway.provider.StepOutcome;
import io.turnstream.gateway.provider.ToolCallRequest;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.ToolResult;
import io.turnstream.model.StreamPayload.Usage;
import io.turnstream.runtime.TraceContext;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * OpenTelemetry spans of the turns this gateway runs, named and attributed by the GenAI semantic
 * conventions: a turn ({@code invoke_agent}) under the trace its request carried, each model step
 * under it, each model call ({@code chat {model}}, retries and fallbacks each their own) and each tool
 * call ({@code execute_tool {name}}, from its release to its result) under their step. Exported over
 * OTLP (http/protobuf) when {@code OTEL_EXPORTER_OTLP_ENDPOINT} is set, configured by the standard
 * {@code OTEL_*} variables (service name, headers, sampler); otherwise spans cost nothing.
 */
public final class TurnTracing implements AutoCloseable {

    static final AttributeKey<String> OPERATION = AttributeKey.stringKey("gen_ai.operation.name");
    static final AttributeKey<String> PROVIDER = AttributeKey.stringKey("gen_ai.provider.name");
    static final AttributeKey<String> REQUEST_MODEL = AttributeKey.stringKey("gen_ai.request.model");
    static final AttributeKey<String> RESPONSE_MODEL = AttributeKey.stringKey("gen_ai.response.model");
    static final AttributeKey<String> CONVERSATION = AttributeKey.stringKey("gen_ai.conversation.id");
    static final AttributeKey<Long> INPUT_TOKENS = AttributeKey.longKey("gen_ai.usage.input_tokens");
    static final AttributeKey<Long> OUTPUT_TOKENS = AttributeKey.longKey("gen_ai.usage.output_tokens");
    static final AttributeKey<List<String>> FINISH_REASONS = AttributeKey.stringArrayKey("gen_ai.response.finish_reasons");
    static final AttributeKey<String> TOOL_NAME = AttributeKey.stringKey("gen_ai.tool.name");
    static final AttributeKey<String> TOOL_CALL_ID = AttributeKey.stringKey("gen_ai.tool.call.id");
    static final AttributeKey<String> TOOL_TYPE = AttributeKey.stringKey("gen_ai.tool.type");
    static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");
    static final AttributeKey<String> TURN_ID = AttributeKey.stringKey("turnstream.turn.id");
    static final AttributeKey<String> TENANT = AttributeKey.stringKey("turnstream.tenant.id");
    static final AttributeKey<Long> STEP = AttributeKey.longKey("turnstream.step");

    /** The variable whose presence switches the OTLP export on. */
    public static final String ENDPOINT_ENV = "OTEL_EXPORTER_OTLP_ENDPOINT";

    private final Tracer tracer;
    /** The SDK this instance made and shuts down; null when given one or none. */
    private final OpenTelemetrySdk owned;

    private TurnTracing(Tracer tracer, OpenTelemetrySdk owned) {
        this.tracer = tracer;
        this.owned = owned;
    }

    /** Spans through the given OpenTelemetry (tests: an SDK with an in-memory exporter). */
    public static TurnTracing of(OpenTelemetry openTelemetry) {
        return new TurnTracing(openTelemetry.getTracer("io.turnstream.gateway"), null);
    }

    /** No spans. */
    public static TurnTracing off() {
        return of(OpenTelemetry.noop());
    }

    /**
     * OTLP export, configured by the {@code OTEL_*} variables, when {@value #ENDPOINT_ENV} is set;
     * traces only (metrics go to Prometheus, logs to log4j).
     */
    public static TurnTracing fromEnvironment(Map<String, String> environment) {
        String endpoint = environment.get(ENDPOINT_ENV);
        if (endpoint == null || endpoint.isBlank()) {
            return off();
        }
        OpenTelemetrySdk sdk = AutoConfiguredOpenTelemetrySdk.builder()
                .addPropertiesSupplier(() -> Map.of(
                        "otel.service.name", "turnstream-gateway",
                        "otel.exporter.otlp.protocol", "http/protobuf",
                        "otel.metrics.exporter", "none",
                        "otel.logs.exporter", "none"))
                .disableShutdownHook()
                .build()
                .getOpenTelemetrySdk();
        return new TurnTracing(sdk.getTracer("io.turnstream.gateway"), sdk);
    }

    /** Starts a turn's span, a child of the span its request carried. */
    TurnSpans turn(AgentLoop.Turn turn, String model) {
        Span span = tracer.spanBuilder("invoke_agent turnstream").setSpanKind(SpanKind.INTERNAL)
                .setParent(turn.trace().context())
                .setAttribute(OPERATION, "invoke_agent")
                .setAttribute(PROVIDER, turn.provider().name())
                .setAttribute(REQUEST_MODEL, model)
                .setAttribute(CONVERSATION, turn.threadId())
                .setAttribute(TURN_ID, turn.turnId())
                .startSpan();
        if (turn.tenantId() != null) {
            span.setAttribute(TENANT, turn.tenantId());
        }
        return new TurnSpans(span, turn.provider().name());
    }

    /** The spans of one turn; used by the thread that runs it. */
    final class TurnSpans {
        private final Span turn;
        private final String provider;
        private final Map<String, Span> tools = new HashMap<>();
        private Span step;

        private TurnSpans(Span turn, String provider) {
            this.turn = turn;
            this.provider = provider;
        }

        /** A model step starts: the current span of the thread until it ends, so model calls nest under it. */
        Scope step(int number) {
            endStep();
            step = tracer.spanBuilder("step " + number).setParent(Context.root().with(turn))
                    .setAttribute(STEP, (long) number).startSpan();
            return step.makeCurrent();
        }

        /** The step's model calls are done; its tool calls may still run under it. */
        void stepCalled(StepOutcome outcome) {
            if (step != null && outcome.status() == ResponseStatus.ERROR && outcome.error() != null) {
                step.setStatus(StatusCode.ERROR, outcome.error().message());
                step.setAttribute(ERROR_TYPE, outcome.error().code());
            }
        }

        /** A model call under the current step. */
        Span modelCall(String model) {
            return tracer.spanBuilder("chat " + model).setSpanKind(SpanKind.CLIENT)
                    .setAttribute(OPERATION, "chat").setAttribute(PROVIDER, provider)
                    .setAttribute(REQUEST_MODEL, model).startSpan();
        }

        void toolCallReleased(ToolCallRequest call) {
            Span parent = step != null ? step : turn;
            tools.computeIfAbsent(call.callId(), id -> tracer.spanBuilder("execute_tool " + call.name())
                    .setParent(Context.root().with(parent)).setSpanKind(SpanKind.INTERNAL)
                    .setAttribute(OPERATION, "execute_tool").setAttribute(TOOL_NAME, call.name())
                    .setAttribute(TOOL_CALL_ID, call.callId()).setAttribute(TOOL_TYPE, "function").startSpan());
        }

        /** A call ended: with its result, or without one ({@code errorCode}). */
        void toolCallEnded(String callId, ToolResult result, String errorCode) {
            Span span = tools.remove(callId);
            if (span == null) {
                return;
            }
            String error = result != null && !result.success()
                    ? (result.error() != null ? result.error().code() : "TOOL_ERROR") : errorCode;
            if (error != null) {
                span.setStatus(StatusCode.ERROR).setAttribute(ERROR_TYPE, error);
            }
            span.end();
        }

        /** The turn ended (or was handed over): every open span ends. */
        void ended(ResponseStatus status, Usage usage, String finishReason, boolean handedOver) {
            tools.keySet().stream().toList().forEach(id -> toolCallEnded(id, null, handedOver ? "HANDED_OVER" : status.wire()));
            endStep();
            if (usage != null) {
                turn.setAttribute(INPUT_TOKENS, usage.promptTokens()).setAttribute(OUTPUT_TOKENS, usage.completionTokens());
            }
            if (finishReason != null) {
                turn.setAttribute(FINISH_REASONS, List.of(finishReason));
            }
            if (status == ResponseStatus.ERROR) {
                turn.setStatus(StatusCode.ERROR).setAttribute(ERROR_TYPE, "turn_error");
            }
            turn.end();
        }

        private void endStep() {
            if (step != null) {
                step.end();
                step = null;
            }
        }
    }

    /** Ends a model call's span with what the call gave. */
    static void modelCallEnded(Span span, StepOutcome outcome) {
        if (outcome.usage() != null) {
            span.setAttribute(INPUT_TOKENS, outcome.usage().promptTokens())
                    .setAttribute(OUTPUT_TOKENS, outcome.usage().completionTokens());
        }
        if (outcome.finishReason() != null) {
            span.setAttribute(FINISH_REASONS, List.of(outcome.finishReason()));
        }
        if (outcome.status() == ResponseStatus.ERROR && outcome.error() != null) {
            span.setStatus(StatusCode.ERROR, outcome.error().message()).setAttribute(ERROR_TYPE, outcome.error().code());
        }
        span.end();
    }

    @Override
    public void close() {
        if (owned != null) {
            owned.close();
        }
    }
}
