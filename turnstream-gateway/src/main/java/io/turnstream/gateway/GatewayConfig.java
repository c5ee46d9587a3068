package io.turnstream.gateway;

import io.turnstream.gateway.loop.CompactionConfig;
import io.turnstream.gateway.loop.LoopConfig;
import io.turnstream.gateway.loop.PriceTable;
import io.turnstream.gateway.provider.RetryPolicy;
import io.turnstream.gateway.security.SecurityConfig;
import io.turnstream.gateway.sim.SimulatedAnthropicServer;
import io.turnstream.runtime.HealthServer;
import io.turnstream.runtime.Settings;
import java.time.Duration;

/**
 * The gateway's settings ({@code turnstream.gateway.*} and {@code turnstream.simulated.*} in the
 * config file), with their defaults.
 *
 * @param managementHost where health and metrics are served, apart from the public API (default: loopback,
 *                       whatever {@code host} is, so a public API never publishes its metrics)
 * @param managementPort 0 for a free one ({@code turnstream gateway} defaults to {@value #DEFAULT_MANAGEMENT_PORT})
 */
public record GatewayConfig(String host, int port, int maxSteps, int maxTokens, Integer thinkingBudget,
                            Duration stallTimeout, RetryPolicy retry, String fallbackModel,
                            Duration toolResultTimeout, int maxConcurrentTurns,
                            double simulatedTokensPerSecond, int simulatedAnswerTokens, SecurityConfig security,
                            String managementHost, int managementPort, PriceTable prices,
                            CompactionConfig compaction, LoopConfig.OnDeny onDeny) {

    public static final String PREFIX = LoopConfig.PREFIX;
    public static final int DEFAULT_PORT = 8080;
    public static final int DEFAULT_MANAGEMENT_PORT = 8083;
    public static final String MANAGEMENT_PORT = PREFIX + "management.port";
    public static final String MANAGEMENT_HOST = PREFIX + "management.host";

    public static GatewayConfig from(Settings settings) {
        long thinking = settings.getLong(PREFIX + "anthropic.thinking-budget", 0);
        String fallback = settings.get(PREFIX + "fallback-model", "").strip();
        String host = settings.get(PREFIX + "host", "127.0.0.1");
        return new GatewayConfig(
                host,
                (int) settings.getLong(PREFIX + "port", DEFAULT_PORT),
                (int) settings.getLong(PREFIX + "max-steps", 10),
                (int) settings.getLong(PREFIX + "max-tokens", 4096),
                thinking > 0 ? (int) thinking : null,
                Duration.ofMillis(settings.getLong(PREFIX + "stall-timeout-ms", 30_000)),
                new RetryPolicy((int) settings.getLong(PREFIX + "retry.max-attempts", 4),
                        Duration.ofMillis(settings.getLong(PREFIX + "retry.base-delay-ms", 1_000)),
                        Duration.ofMillis(settings.getLong(PREFIX + "retry.max-delay-ms", 30_000))),
                fallback.isEmpty() ? null : fallback,
                Duration.ofMillis(settings.getLong(PREFIX + "tool-result-timeout-ms", 600_000)),
                (int) settings.getLong(PREFIX + "max-concurrent-turns", 256),
                tokensPerSecond(settings),
                (int) settings.getLong("turnstream.simulated.answer-tokens", SimulatedAnthropicServer.DEFAULT_ANSWER_TOKENS),
                SecurityConfig.from(settings, System.getenv()),
                settings.get(MANAGEMENT_HOST, HealthServer.LOOPBACK),
                (int) settings.getLong(MANAGEMENT_PORT, 0),
                PriceTable.from(settings),
                CompactionConfig.from(settings),
                LoopConfig.OnDeny.parse(settings.get(PREFIX + "approvals.on-deny", "stop")));
    }

    private static double tokensPerSecond(Settings settings) {
        String key = "turnstream.simulated.tokens-per-second";
        String value = settings.get(key, String.valueOf(SimulatedAnthropicServer.DEFAULT_TOKENS_PER_SECOND));
        try {
            return Double.parseDouble(value.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " must be a number, got '" + value + "'");
        }
    }

    /** The part of the settings the agent loop runs turns with. */
    public LoopConfig loop() {
        return new LoopConfig(maxTokens, thinkingBudget, retry, toolResultTimeout, prices, compaction, onDeny);
    }
}
