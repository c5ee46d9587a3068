package io.turnstream.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import io.turnstream.model.ItemAppend;
import io.turnstream.model.ToolCall;
import java.time.Duration;
import java.util.Properties;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class TurnstreamTestDriverTest {

    private final TurnstreamTestDriver driver = TurnstreamTestDriver.create();

    @AfterEach
    void close() {
        driver.close();
    }

    @Test
    void aCompletedTurnReadsAsAUiShowsIt() {
        driver.send(TurnEvents.turn("turn-1")
                .message("msg-1", "Hello", ", ", "world")
                .toolCall("call-item-1", "read_file", "{\"path\": \"README.md\"}", "call-1")
                .completed());

        TurnAssert.assertThat(driver.turn("turn-1"))
                .hasStarted()
                .isCompleted()
                .hasMessage("msg-1", "Hello, world")
                .hasToolCall("read_file", "{\"path\":\"README.md\"}")
                .hasConsistentSequence()
                .hasLiveTextMatchingFinalContent("msg-1");
        assertThat(driver.toolCalls()).extracting(ToolCall::callId, ToolCall::toolName)
                .containsExactly(tuple("call-1", "read_file"));
    }

    @Test
    void aStreamingItemShowsItsTextThroughAppendsBeforeItEnds() {
        driver.send(TurnEvents.turn("turn-2").messageStreaming("msg-1", "Hel", "lo").events());

        driver.advanceWallClockTime(Duration.ofMillis(200));

        assertThat(driver.appends()).extracting(ItemAppend::text).containsExactly("Hello");
        assertThat(driver.turn("turn-2").liveText("msg-1")).isEqualTo("Hello");
        TurnAssert.assertThat(driver.turn("turn-2")).isOpen();
    }

    @Test
    void anIdleTurnTimesOutOnTheConfiguredClock() {
        Properties settings = new Properties();
        settings.setProperty("turnstream.turn.idle-timeout.ms", "5000");
        try (TurnstreamTestDriver quick = TurnstreamTestDriver.create(settings)) {
            quick.send(TurnEvents.turn("turn-3").messageStreaming("msg-1", "Hi").events());

            quick.advanceWallClockTime(Duration.ofSeconds(6));

            TurnAssert.assertThat(quick.turn("turn-3")).failedWith("TURN_TIMEOUT");
        }
    }

    @Test
    void badInputIsDeadLetteredWithItsReason() {
        driver.sendRaw("run-x", "not json");

        assertThat(driver.deadLetters()).singleElement().satisfies(dead -> {
            assertThat(dead.key()).isEqualTo("run-x");
            assertThat(dead.value()).isEqualTo("not json");
            assertThat(dead.reason()).startsWith("unparseable StreamEvent");
        });
    }

    @Test
    void aFailedAssertionShowsTheTurn() {
        driver.send(TurnEvents.turn("turn-4").message("msg-1", "Hi").completed());

        assertThatThrownBy(() -> TurnAssert.assertThat(driver.turn("turn-4")).hasMessage("msg-1", "Bye"))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("\"Bye\"")
                .hasMessageContaining("\"Hi\"");
        assertThatThrownBy(() -> TurnAssert.assertThat(driver.turn("turn-4")).failedWith("PROVIDER_ERROR"))
                .hasMessageContaining("turn_completed")
                .hasMessageContaining("message msg-1 completed");
    }
}
