package io.turnstream.gateway;

import io.turnstream.gateway.provider.RetryPolicy;
import io.turnstream.gateway.sim.SimulatedAnthropicServer;
import io.turnstream.runtime.Settings;
import java.time.Duration;

/**
 * The gateway's settings ({@code turnstream.gateway.*} and {@code turnstream.simulated.*} in the
 * config file), with their defaults.
 */
public record GatewayConfig(String host, int port, int maxSteps, int maxTokens, Integer thinkingBudget,
                            Duration stallTimeout, RetryPolicy retry, String fallbackModel,
                            Duration toolResultTimeout, int maxConcurrentTurns,
                            double simulatedTokensPerSecond, int simulatedAnswerTokens, PriceTable prices) {

    public static final String PREFIX = "turnstream.gateway.";
    public static final int DEFAULT_PORT = 8080;

    public static GatewayConfig from(Settings settings) {
        long thinking = settings.getLong(PREFIX + "anthropic.thinking-budget", 0);
        String fallback = settings.get(PREFIX + "fallback-model", "").strip();
        return new GatewayConfig(
                settings.get(PREFIX + "host", "127.0.0.1"),
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
                PriceTable.from(settings));
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
}
