package io.turnstream.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.turnstream.runtime.Settings;
import java.time.Duration;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class ToolExecutorConfigTest {

    private static Settings settings(String... pairs) {
        Properties props = new Properties();
        props.setProperty(ToolExecutorConfig.WORKSPACE, "/tmp/ws");
        for (int i = 0; i < pairs.length; i += 2) {
            props.setProperty(ToolExecutorConfig.PREFIX + pairs[i], pairs[i + 1]);
        }
        return Settings.of(props);
    }

    @Test
    void defaultsAreThoseOfTheDocumentation() {
        ToolExecutorConfig config = ToolExecutorConfig.from(settings());

        assertThat(config.maxConcurrency()).isEqualTo(10);
        assertThat(config.maxInFlight()).isEqualTo(100);
        assertThat(config.tenantMaxInFlight()).isEqualTo(50);
        assertThat(config.defaultTimeout()).isEqualTo(Duration.ofMinutes(2));
        assertThat(config.maxTimeout()).isEqualTo(Duration.ofMinutes(10));
        assertThat(config.limits()).isEqualTo(new OutputLimits(100 * 1024, 2000));
        assertThat(config.abortSiblingsOnFailure()).isTrue();
        assertThat(config.doomLoopThreshold()).isEqualTo(3);
        assertThat(config.ledgerTopic()).isEqualTo("llm.tool-ledger");
        assertThat(config.deadLetterTopic()).isEqualTo("llm.tool-calls.dlq");
    }

    @Test
    void aToolsTimeoutIsConfiguredOrItsOwnOrTheDefaultAndNeverAboveTheMaximum() {
        ToolExecutorConfig config = ToolExecutorConfig.from(settings("timeout-ms", "1000", "max-timeout-ms", "5000",
                "timeout-ms.slow", "60000", "timeout-ms.quick", "10"));
        ScriptedTool own = ScriptedTool.safe("own", (args, context) -> null).withTimeout(Duration.ofSeconds(3));

        assertThat(config.timeoutFor(ScriptedTool.safe("plain", (args, context) -> null))).isEqualTo(Duration.ofSeconds(1));
        assertThat(config.timeoutFor(own)).isEqualTo(Duration.ofSeconds(3));
        assertThat(config.timeoutFor(ScriptedTool.safe("quick", (args, context) -> null))).isEqualTo(Duration.ofMillis(10));
        assertThat(config.timeoutFor(ScriptedTool.safe("slow", (args, context) -> null))).isEqualTo(Duration.ofSeconds(5));
    }

    @Test
    void badValuesAreRefusedWithTheKeyInTheMessage() {
        assertThatThrownBy(() -> ToolExecutorConfig.from(settings("max-in-flight", "10", "tenant-max-in-flight", "11")))
                .hasMessageContaining("tenant-max-in-flight (11) must be at most turnstream.tool-executor.max-in-flight (10)");
        assertThatThrownBy(() -> ToolExecutorConfig.from(settings("max-concurrency", "0")))
                .hasMessage("turnstream.tool-executor.max-concurrency must be a positive whole number, got 0");
        assertThatThrownBy(() -> ToolExecutorConfig.from(settings("abort-siblings-on-failure", "maybe")))
                .hasMessage("turnstream.tool-executor.abort-siblings-on-failure must be true or false, got 'maybe'");
        assertThatThrownBy(() -> ToolExecutorConfig.from(Settings.of(new Properties())))
                .hasMessageContaining("needs a workspace directory");
    }
}
