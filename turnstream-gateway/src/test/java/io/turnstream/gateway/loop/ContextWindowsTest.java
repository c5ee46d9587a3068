package io.turnstream.gateway.loop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.turnstream.gateway.provider.StepOutcome;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.StreamPayload.Usage;
import io.turnstream.runtime.Settings;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** Context windows per model, the compaction threshold, and which provider errors mean "prompt too long". */
class ContextWindowsTest {

    @Test
    void aModelGetsTheWindowOfItsLongestPrefixAndAnUnknownModelTheDefault() {
        CompactionConfig config = CompactionConfig.from(settings());

        assertThat(config.windows().of("claude-sonnet-4-5-20250929")).isEqualTo(200_000);
        assertThat(config.windows().of("gpt-4.1-mini")).isEqualTo(1_047_576);
        assertThat(config.windows().of("gpt-4o-mini")).isEqualTo(128_000);
        assertThat(config.windows().of("mistral-large")).isEqualTo(ContextWindows.DEFAULT_WINDOW);
        assertThat(config.threshold()).isEqualTo(0.9);
    }

    @Test
    void windowsThresholdAndTheDefaultAreConfigured() {
        CompactionConfig config = CompactionConfig.from(settings(
                "turnstream.gateway.context-window.claude-sonnet-4", "1000000",
                "turnstream.gateway.context-window.my-model", "32000",
                "turnstream.gateway.compaction.default-context-window", "8000",
                "turnstream.gateway.compaction.threshold", "0.8"));

        assertThat(config.windows().of("claude-sonnet-4-5")).isEqualTo(1_000_000);
        assertThat(config.windows().of("claude-opus-4-1")).isEqualTo(200_000);
        assertThat(config.windows().of("my-model-v2")).isEqualTo(32_000);
        assertThat(config.windows().of("unknown")).isEqualTo(8_000);
        assertThat(config.nearlyFull("my-model", 25_600)).isTrue();
        assertThat(config.nearlyFull("my-model", 25_599)).isFalse();
    }

    @Test
    void badSettingsAreRefusedWithTheKeyAndWhatIsExpected() {
        assertThatThrownBy(() -> CompactionConfig.from(settings("turnstream.gateway.context-window.x", "lots")))
                .hasMessage("turnstream.gateway.context-window.x must be a positive number of tokens, got 'lots'");
        assertThatThrownBy(() -> CompactionConfig.from(settings("turnstream.gateway.compaction.threshold", "90")))
                .hasMessageStartingWith("turnstream.gateway.compaction.threshold must be a share of the context window");
    }

    @Test
    void theContextAStepFilledIsItsWholePromptAndItsOutput() {
        assertThat(ContextWindows.used(new Usage(9_000, 500, 9_500, 8_000L, 900L, null, null))).isEqualTo(9_500);
    }

    @Test
    void promptTooLongErrorsOfAnthropicAndOpenAiAreOverflowsOtherErrorsAreNot() {
        assertThat(ContextWindows.overflowed(refused("invalid_request_error",
                "the provider answered HTTP 400: prompt is too long: 208310 tokens > 200000 maximum"))).isTrue();
        assertThat(ContextWindows.overflowed(refused("invalid_request_error",
                "the provider answered HTTP 400: input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000")))
                .isTrue();
        assertThat(ContextWindows.overflowed(refused("context_length_exceeded",
                "the provider answered HTTP 400: This model's maximum context length is 128000 tokens."))).isTrue();
        assertThat(ContextWindows.overflowed(refused("invalid_request_error", "the provider answered HTTP 400: bad tool")))
                .isFalse();
        assertThat(ContextWindows.overflowed(refused("rate_limit_error", "prompt is too long"))).isFalse();
        StepOutcome afterOutput = StepOutcome.refused(ErrorInfo.of("context_length_exceeded", "too long"), false, false,
                null, 3);
        assertThat(ContextWindows.overflowed(afterOutput)).as("a call that published items is not made again").isFalse();
    }

    @Test
    void theOverflowSizeIsTakenFromTheProvidersMessageWhenItSaysIt() {
        ContextWindows windows = CompactionConfig.from(settings()).windows();

        assertThat(windows.overflowTokens("claude-opus-4", ErrorInfo.of("invalid_request_error",
                "prompt is too long: 208310 tokens > 200000 maximum"))).isEqualTo(208_310);
        assertThat(windows.overflowTokens("gpt-4o", ErrorInfo.of("context_length_exceeded", "too long")))
                .isEqualTo(128_000);
    }

    private static StepOutcome refused(String code, String message) {
        return StepOutcome.refused(ErrorInfo.of(code, message), false, false, null, 0);
    }

    private static Settings settings(String... keysAndValues) {
        Properties properties = new Properties();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            properties.put(keysAndValues[i], keysAndValues[i + 1]);
        }
        return Settings.of(properties);
    }
}
