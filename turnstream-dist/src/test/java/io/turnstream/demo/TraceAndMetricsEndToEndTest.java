package io.turnstream.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.gateway.ProviderEndpoints;
import io.turnstream.model.Json;
import io.turnstream.model.Topics;
import io.turnstream.model.UiPayloadType;
import io.turnstream.runtime.CommittedReader;
import io.turnstream.runtime.PrometheusScrape;
import io.turnstream.runtime.TraceContext;
import io.turnstream.testsupport.UsesBroker;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The whole pipeline on the embedded broker (the demo: topology, tool executor, gateway, simulated
 * provider): a turn started over HTTP with a {@code traceparent} carries it into every raw event's
 * {@code trace_context} and onto the headers of its upserts, appends, tool calls and tool results; the
 * services' meters move on {@code /metrics/prometheus}.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
@UsesBroker
class TraceAndMetricsEndToEndTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final String TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    private static final String TRACESTATE = "congo=t61rcWkgMzE";
    /** The demo's script reads the file a prompt names, so the turn makes a tool call. */
    private static final String PROMPT = "What does notes/next-launch.md say?";

    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static Demo demo;

    @BeforeAll
    static void startDemo() {
        demo = Demo.start(new Demo.Options(0, ProviderEndpoints.simulatedOnly(null), "simulated", null),
                new PrintWriter(new StringWriter()));
    }

    @AfterAll
    static void stopDemo() {
        demo.close();
    }

    @Test
    void aTurnsTraceContextReachesEveryRecordItCauses() throws Exception {
        HttpResponse<String> started = startTurn(Map.of("traceparent", TRACEPARENT, "tracestate", TRACESTATE));
        assertThat(started.statusCode()).isEqualTo(202);
        assertThat(started.headers().firstValue("traceparent")).hasValue(TRACEPARENT);
        JsonNode turn = Json.MAPPER.readTree(started.body());
        String turnId = turn.get("turnId").asText();
        String runId = turn.get("runId").asText();

        List<ConsumerRecord<String, String>> upserts = awaitTurnEnd(turnId);
        assertThat(upserts).allSatisfy(upsert -> assertCarriesTheTrace(upsert, TRACEPARENT, TRACESTATE));

        assertThat(recordsOfTurn(Topics.DEFAULTS.itemAppends(), turnId, 1))
                .allSatisfy(append -> assertCarriesTheTrace(append, TRACEPARENT, TRACESTATE));

        List<ConsumerRecord<String, String>> calls = recordsOfTurn(Topics.DEFAULTS.toolCalls(), turnId, 1);
        assertThat(calls).allSatisfy(call -> assertCarriesTheTrace(call, TRACEPARENT, TRACESTATE));
        List<ConsumerRecord<String, String>> results = recordsOfTurn(Topics.DEFAULTS.toolResults(), turnId, calls.size());
        assertThat(results).allSatisfy(result -> assertCarriesTheTrace(result, TRACEPARENT, TRACESTATE));

        List<JsonNode> rawEvents = rawEventsOfRun(runId);
        assertThat(rawEvents).isNotEmpty().allSatisfy(event -> {
            assertThat(event.at("/trace_context/traceparent").asText()).isEqualTo(TRACEPARENT);
            assertThat(event.at("/trace_context/tracestate").asText()).isEqualTo(TRACESTATE);
        });
    }

    @Test
    void aTurnStartedWithoutATraceGetsAFreshOneThatItsRecordsShare() throws Exception {
        HttpResponse<String> started = startTurn(Map.of("traceparent", "not-a-trace"));
        assertThat(started.statusCode()).isEqualTo(202);
        String fresh = started.headers().firstValue("traceparent").orElseThrow();
        assertThat(TraceContext.fromJson(Json.MAPPER.createObjectNode().put("traceparent", fresh))).isNotNull();
        String turnId = Json.MAPPER.readTree(started.body()).get("turnId").asText();

        assertThat(awaitTurnEnd(turnId)).allSatisfy(upsert -> assertCarriesTheTrace(upsert, fresh, null));
    }

    @Test
    void theServicesMetersMoveOnTheScrape() throws Exception {
        PrometheusScrape before = PrometheusScrape.of(demo.managementUrl());
        double turnsBefore = before.sum("turnstream_gateway_turns_started_total", Map.of("service", "demo"));
        double toolCallsBefore = before.sum("turnstream_tool_executor_calls_total", Map.of("tool", "read_file"));
        double turnsTimedBefore = before.sum("turnstream_gateway_turn_duration_seconds_count", Map.of("status", "complete"));
        double stepsTimedBefore = before.sum("turnstream_gateway_step_duration_seconds_count");
        double firstTokensBefore = before.sum("turnstream_gateway_time_to_first_token_seconds_count");
        double toolsTimedBefore = before.sum("turnstream_gateway_tool_duration_seconds_count", Map.of("tool", "read_file"));
        double promptTokensBefore = before.sum("turnstream_gateway_tokens_total", Map.of("kind", "prompt", "tenant", "none"));

        String turnId = Json.MAPPER.readTree(startTurn(Map.of()).body()).get("turnId").asText();
        awaitTurnEnd(turnId);

        Awaitility.await().atMost(TIMEOUT).untilAsserted(() -> {
            PrometheusScrape after = PrometheusScrape.of(demo.managementUrl());
            assertThat(after.sum("turnstream_gateway_turns_started_total")).isEqualTo(turnsBefore + 1);
            assertThat(after.sum("turnstream_tool_executor_calls_total", Map.of("tool", "read_file")))
                    .isEqualTo(toolCallsBefore + 1);
            assertThat(after.sum("turnstream_gateway_turn_duration_seconds_count", Map.of("status", "complete")))
                    .isEqualTo(turnsTimedBefore + 1);
            assertThat(after.sum("turnstream_gateway_step_duration_seconds_count")).isGreaterThan(stepsTimedBefore);
            assertThat(after.sum("turnstream_gateway_time_to_first_token_seconds_count")).isGreaterThan(firstTokensBefore);
            assertThat(after.has("turnstream_gateway_time_to_first_token_seconds_bucket")).isTrue();
            assertThat(after.sum("turnstream_gateway_tool_duration_seconds_count", Map.of("tool", "read_file")))
                    .isEqualTo(toolsTimedBefore + 1);
            assertThat(after.sum("turnstream_gateway_tokens_total", Map.of("kind", "prompt", "tenant", "none")))
                    .isGreaterThan(promptTokensBefore);
            assertThat(after.sum("kafka_stream_thread_process_total")).isPositive();
            assertThat(after.sum("kafka_producer_record_send_total")).isPositive();
        });
    }

    private static HttpResponse<String> startTurn(Map<String, String> headers) throws IOException, InterruptedException {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(demo.gatewayUrl() + "/v1/turns"))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(Json.toString(Map.of("prompt", PROMPT))));
        headers.forEach(request::header);
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Every upsert of the turn, once its last one ({@code turn_completed} or {@code turn_error}) is there. */
    private static List<ConsumerRecord<String, String>> awaitTurnEnd(String turnId) {
        try (CommittedReader reader = new CommittedReader(demo.bootstrapServers(), Topics.DEFAULTS.upserts())) {
            return reader.awaitUntil(TIMEOUT, read -> read.stream().anyMatch(r -> turnId.equals(r.key())
                            && (r.value().contains(UiPayloadType.TURN_COMPLETED.wire()) || r.value().contains(UiPayloadType.TURN_ERROR.wire()))))
                    .stream().filter(r -> turnId.equals(r.key())).toList();
        }
    }

    private static List<ConsumerRecord<String, String>> recordsOfTurn(String topic, String turnId, int atLeast) {
        try (CommittedReader reader = new CommittedReader(demo.bootstrapServers(), topic)) {
            return reader.awaitUntil(TIMEOUT, read -> read.stream().filter(r -> turnId.equals(r.key())).count() >= atLeast)
                    .stream().filter(r -> turnId.equals(r.key())).toList();
        }
    }

    private static List<JsonNode> rawEventsOfRun(String runId) {
        try (CommittedReader reader = new CommittedReader(demo.bootstrapServers(), Topics.DEFAULTS.rawEvents())) {
            return reader.awaitUntil(TIMEOUT, read -> read.stream().anyMatch(r -> runId.equals(r.key())
                            && r.value().contains("\"response_done\"")))
                    .stream().filter(r -> runId.equals(r.key())).map(r -> Json.fromString(r.value(), JsonNode.class)).toList();
        }
    }

    private static void assertCarriesTheTrace(ConsumerRecord<String, String> record, String traceparent, String tracestate) {
        assertThat(header(record, "traceparent")).as("traceparent of %s", record.value()).isEqualTo(traceparent);
        assertThat(header(record, "tracestate")).as("tracestate of %s", record.value()).isEqualTo(tracestate);
    }

    private static String header(ConsumerRecord<String, String> record, String name) {
        Header header = record.headers().lastHeader(name);
        return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }
}
