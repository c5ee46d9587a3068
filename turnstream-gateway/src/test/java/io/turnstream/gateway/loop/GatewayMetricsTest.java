package io.turnstream.gateway.loop;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload.Usage;
import io.turnstream.runtime.PrometheusScrape;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The gateway's latency histograms and usage counters as Prometheus scrapes them. */
class GatewayMetricsTest {

    private final GatewayMetrics metrics = new GatewayMetrics();
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);

    @BeforeEach
    void bind() {
        metrics.bindTo(registry);
    }

    private PrometheusScrape scrape() {
        return new PrometheusScrape("text/plain", registry.scrape());
    }

    @Test
    void latenciesAreHistogramsInSecondsWithBuckets() {
        metrics.timeToFirstToken("anthropic", "claude-sonnet-4-5", Duration.ofMillis(420));
        metrics.step("anthropic", "claude-sonnet-4-5", ResponseStatus.COMPLETE, Duration.ofMillis(1800));
        metrics.toolCall("read_file", true, Duration.ofMillis(35));
        metrics.turn("anthropic", "acme", ResponseStatus.COMPLETE, Duration.ofSeconds(7));

        PrometheusScrape scrape = scrape();

        Map<String, String> model = Map.of("provider", "anthropic", "model", "claude-sonnet-4-5");
        assertThat(scrape.sum("turnstream_gateway_time_to_first_token_seconds_count", model)).isEqualTo(1);
        assertThat(scrape.sum("turnstream_gateway_time_to_first_token_seconds_sum", model)).isEqualTo(0.42);
        assertThat(scrape.sum("turnstream_gateway_time_to_first_token_seconds_bucket",
                Map.of("model", "claude-sonnet-4-5", "le", "+Inf"))).isEqualTo(1);
        assertThat(scrape.text()).containsPattern("turnstream_gateway_step_duration_seconds_bucket\\{.*le=\"2\\.\\d+\".*} 1");
        assertThat(scrape.sum("turnstream_gateway_step_duration_seconds_count", Map.of("status", "complete"))).isEqualTo(1);
        assertThat(scrape.sum("turnstream_gateway_tool_duration_seconds_sum", Map.of("tool", "read_file", "success", "true")))
                .isEqualTo(0.035);
        assertThat(scrape.sum("turnstream_gateway_turn_duration_seconds_count", Map.of("tenant", "acme"))).isEqualTo(1);
    }

    @Test
    void tokensAndCostAreCountedByProviderModelTenantAndFailedCallsApart() {

        metrics.usage("openai", "gpt-5-mini", "acme", new Usage(1000, 200, 1200, 600L, null, 50L, 0.000565), false);
        metrics.usage("openai", "gpt-5-mini", "acme", new Usage(400, 100, 500, null, null, null, 0.0003), true);
        metrics.usage("openai", "gpt-5-mini", "other", new Usage(10, 1, 11), false);

        PrometheusScrape scrape = scrape();
        Map<String, String> acme = Map.of("provider", "openai", "model", "gpt-5-mini", "tenant", "acme");
        assertThat(scrape.sum("turnstream_gateway_tokens_total", with(acme, "kind", "prompt"))).isEqualTo(1400);
        assertThat(scrape.sum("turnstream_gateway_tokens_total", with(acme, "kind", "completion"))).isEqualTo(300);
        assertThat(scrape.sum("turnstream_gateway_tokens_total", with(acme, "kind", "cache_read"))).isEqualTo(600);
        assertThat(scrape.sum("turnstream_gateway_tokens_total", with(acme, "kind", "reasoning"))).isEqualTo(50);
        assertThat(scrape.sum("turnstream_gateway_cost_usd_total", acme)).isCloseTo(0.000865, org.assertj.core.data.Offset.offset(1e-12));
        assertThat(scrape.sum("turnstream_gateway_tokens_total", with(with(acme, "kind", "prompt"), "call", "failed")))
                .as("a failed call's, apart").isEqualTo(400);
        assertThat(scrape.sum("turnstream_gateway_cost_usd_total", with(acme, "call", "failed"))).isEqualTo(0.0003);
        assertThat(scrape.sum("turnstream_gateway_tokens_total", Map.of("tenant", "other", "kind", "prompt"))).isEqualTo(10);
        assertThat(scrape.sum("turnstream_gateway_cost_usd_total", Map.of("tenant", "other"))).isZero();
    }

    /** Every metric the dashboard in docs/ queries is one the gateway serves. */
    @Test
    void theGrafanaDashboardQueriesMetricsTheGatewayServes() throws Exception {
        metrics.timeToFirstToken("p", "m", Duration.ofMillis(1));
        metrics.step("p", "m", ResponseStatus.COMPLETE, Duration.ofMillis(1));
        metrics.toolCall("t", true, Duration.ofMillis(1));
        metrics.turn("p", "none", ResponseStatus.COMPLETE, Duration.ofMillis(1));
        metrics.usage("p", "m", "none", new Usage(1, 1, 2, null, null, null, 0.01), false);
        PrometheusScrape scrape = scrape();

        String dashboard = java.nio.file.Files.readString(java.nio.file.Path.of("..", "docs", "grafana-dashboard.json"));
        java.util.regex.Matcher names = java.util.regex.Pattern.compile("turnstream_gateway_[a-z_]+").matcher(dashboard);
        java.util.Set<String> queried = new java.util.TreeSet<>();
        while (names.find()) {
            queried.add(names.group());
        }
        assertThat(queried).hasSizeGreaterThanOrEqualTo(8)
                .allSatisfy(name -> assertThat(scrape.has(name)).as("the scrape has %s", name).isTrue());
    }

    private static Map<String, String> with(Map<String, String> labels, String key, String value) {
        Map<String, String> more = new java.util.HashMap<>(labels);
        more.put(key, value);
        return more;
    }
}
