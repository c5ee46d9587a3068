package io.turnstream.topology;

import static io.turnstream.topology.Events.delta;
import static io.turnstream.topology.Events.done;
import static io.turnstream.topology.Events.doneWithContent;
import static io.turnstream.topology.Events.functionCallDone;
import static io.turnstream.topology.Events.functionCallStart;
import static io.turnstream.topology.Events.functionOutputDone;
import static io.turnstream.topology.Events.itemError;
import static io.turnstream.topology.Events.itemStart;
import static io.turnstream.topology.Events.responseDone;
import static io.turnstream.topology.Events.responseError;
import static io.turnstream.topology.Events.responseStart;
import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.PayloadType;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.ToolCall;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UpsertEnvelope;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The seed's test cases TC-01..TC-11, each with the exact output sequence, as made precise in ARCHITECTURE.md. */
class UpsertSpecificationTest {

    private static final String RUN = "run-1";
    private final TopologyHarness topology = new TopologyHarness();

    @AfterEach
    void close() {
        topology.close();
    }

    @Test
    void tc01_simpleAgentMessage() {
        topology.send(RUN, responseStart("turn-1", "anthropic"));
        topology.send(RUN, itemStart("msg-1", "message"));
        topology.send(RUN, delta("msg-1", "Hello there!"));
        topology.send(RUN, doneWithContent("msg-1", "message", "Hello there!", "agent"));
        topology.send(RUN, responseDone(ResponseStatus.COMPLETE));

        assertThat(topology.emitted()).containsExactly(
                "turn_started",
                "message created v1 origin=agent \"Hello there!\"",
                "message completed v2 origin=agent \"Hello there!\"",
                "turn_completed complete");
    }

    @Test
    void tc01_turnStartedCarriesModelAndProviderAndCompletedCarriesUsage() {
        topology.send(RUN, responseStart("turn-1", "anthropic"));
        topology.send(RUN, responseDone(ResponseStatus.COMPLETE));

        List<UpsertEnvelope> envelopes = topology.upserts();
        assertThat(envelopes.get(0).payload()).hasFieldOrPropertyWithValue("modelId", "model-x")
                .hasFieldOrPropertyWithValue("providerId", "anthropic")
                .hasFieldOrPropertyWithValue("threadId", "thread-1");
        assertThat(envelopes.get(1).payload()).hasFieldOrPropertyWithValue("usage.totalTokens", 46L)
                .hasFieldOrPropertyWithValue("usage.promptTokens", 12L);
        assertThat(envelopes).extracting(UpsertEnvelope::seq).containsExactly(1L, 2L);
        assertThat(envelopes).extracting(UpsertEnvelope::payloadType).containsExactly(PayloadType.TURN_EVENT, PayloadType.TURN_EVENT);
    }

    @Test
    void tc02_agentMessageWithBatching() {
        topology.send(RUN, responseStart("turn-1", "anthropic"));
        topology.send(RUN, itemStart("msg-1", "message"));
        topology.send(RUN, delta("msg-1", "Hello, how are you?"));
        topology.send(RUN, delta("msg-1", " I hope you're having a great"));
        topology.send(RUN, delta("msg-1", " day today!"));
        topology.send(RUN, done("msg-1"));
        topology.send(RUN, responseDone(ResponseStatus.COMPLETE));

        assertThat(topology.emitted()).containsExactly(
                "turn_started",
                "message created v1 origin=agent \"Hello, how are you?\"",
                "message updated v2 origin=agent \"Hello, how are you? I hope you're having a great\"",
                "message completed v3 origin=agent \"Hello, how are you? I hope you're having a great day today!\"",
                "turn_completed complete");
    }

    @Test
    void tc03_userMessageIsHeldUntilComplete() {
        topology.send(RUN, responseStart("turn-1", "anthropic"));
        topology.send(RUN, itemStart("run-123-user-prompt", "message"));
        topology.send(RUN, delta("run-123-user-prompt", "What is the"));
        assertThat(topology.emitted()).containsExactly("turn_started");

        topology.send(RUN, doneWithContent("run-123-user-prompt", "message", "What is the weather?", "user"));
        topology.send(RUN, itemStart("msg-1", "message"));
        topology.send(RUN, delta("msg-1", "Sunny."));
        topology.send(RUN, done("msg-1"));
        topology.send(RUN, responseDone(ResponseStatus.COMPLETE));

        assertThat(topology.emitted()).containsExactly(
                "message completed v1 origin=user \"What is the weather?\"",
                "message created v1 origin=agent \"Sunny.\"",
                "message completed v2 origin=agent \"Sunny.\"",
                "turn_completed complete");
    }

    @Test
    void tc04_reasoningBlockCarriesTheProvider() {
        topology.send(RUN, responseStart("turn-1", "anthropic"));
        topology.send(RUN, itemStart("rs-1", "reasoning"));
        topology.send(RUN, delta("rs-1", "Let me think about this."));
        topology.send(RUN, delta("rs-1", " The user wants the weather in Paris today."));
        topology.send(RUN, done("rs-1"));
        topology.send(RUN, itemStart("msg-1", "message"));
        topology.send(RUN, delta("msg-1", "It is sunny."));
        topology.send(RUN, done("msg-1"));
        topology.send(RUN, responseDone(ResponseStatus.COMPLETE));

        assertThat(topology.emitted()).containsExactly(
                "turn_started",
                "reasoning created v1 provider=anthropic \"Let me think about this.\"",
                "reasoning updated v2 provider=anthropic \"Let me think about this. The user wants the weather in Paris today.\"",
                "reasoning completed v3 provider=anthropic \"Let me think about this. The user wants the weather in Paris today.\"",
                "message created v1 origin=agent \"It is sunny.\"",
                "message completed v2 origin=agent \"It is sunny.\"",
                "turn_completed complete");
    }

    @Test
    void tc05_toolCallAndOutput() {
        topology.send(RUN, responseStart("turn-1", "anthropic"));
        topology.send(RUN, functionCallStart("fc-1", "read_file", null));
        topology.send(RUN, functionCallDone("fc-1", "read_file", "{\"path\": \"/tmp/test.txt\"}", "call-1"));
        topology.send(RUN, itemStart("fco-1", "function_call_output"));
        topology.send(RUN, functionOutputDone("fco-1", "call-1", "{\"content\": \"file contents\"}", true));
        topology.send(RUN, itemStart("msg-1", "message"));
        topology.send(RUN, delta("msg-1", "Done."));
        topology.send(RUN, done("msg-1"));
        topology.send(RUN, responseDone(ResponseStatus.COMPLETE));

        assertThat(topology.emitted()).containsExactly(
                "turn_started",
                "tool_call completed v1 read_file {\"path\":\"/tmp/test.txt\"} call=call-1",
                "tool_output completed v1 call=call-1 success=true {\"content\":\"file contents\"}",
                "message created v1 origin=agent \"Done.\"",
                "message completed v2 origin=agent \"Done.\"",
                "turn_completed complete");
        List<ToolCall> calls = topology.toolCalls();
        assertThat(calls).hasSize(1);
        assertThat(calls.get(0)).satisfies(call -> {
            assertThat(call.callId()).isEqualTo("call-1");
            assertThat(call.turnId()).isEqualTo("turn-1");
            assertThat(call.threadId()).isEqualTo("thread-1");
            assertThat(call.runId()).isEqualTo(RUN);
            assertThat(call.itemId()).isEqualTo("fc-1");
            assertThat(call.toolName()).isEqualTo("read_file");
            assertThat(call.arguments().get("path").asText()).isEqualTo("/tmp/test.txt");
        });
    }

    @Test
    void tc06_multipleToolCallsInSequence() {
        topology.send(RUN, responseStart("turn-1", "openai"));
        topology.send(RUN, functionCallStart("fc-1", "read_file", "call-1"));
        topology.send(RUN, functionCallDone("fc-1", "read_file", "{\"path\":\"a.txt\"}", "call-1"));
        topology.send(RUN, itemStart("fco-1", "function_call_output"));
        topology.send(RUN, functionOutputDone("fco-1", "call-1", "alpha", true));
        topology.send(RUN, functionCallStart("fc-2", "write_file", "call-2"));
        topology.send(RUN, functionCallDone("fc-2", "write_file", "{\"path\":\"b.txt\",\"content\":\"beta\"}", "call-2"));
        topology.send(RUN, itemStart("fco-2", "function_call_output"));
        topology.send(RUN, functionOutputDone("fco-2", "call-2", "{\"written\":4}", true));
        topology.send(RUN, itemStart("msg-1", "message"));
        topology.send(RUN, delta("msg-1", "Copied."));
        topology.send(RUN, done("msg-1"));
        topology.send(RUN, responseDone(ResponseStatus.COMPLETE));

        assertThat(topology.emitted()).containsExactly(
                "turn_started",
                "tool_call completed v1 read_file {\"path\":\"a.txt\"} call=call-1",
                "tool_output completed v1 call=call-1 success=true \"alpha\"",
                "tool_call completed v1 write_file {\"path\":\"b.txt\",\"content\":\"beta\"} call=call-2",
                "tool_output completed v1 call=call-2 success=true {\"written\":4}",
                "message created v1 origin=agent \"Copied.\"",
                "message completed v2 origin=agent \"Copied.\"",
                "turn_completed complete");
        assertThat(topology.toolCalls()).extracting(ToolCall::callId).containsExactly("call-1", "call-2");
    }

    @Test
    void tc07_itemErrorMidStream() {
        topology.send(RUN, responseStart("turn-1", "anthropic"));
        topology.send(RUN, itemStart("msg-1", "message"));
        topology.send(RUN, delta("msg-1", "Here is how to"));
        topology.send(RUN, itemError("msg-1", "CONTENT_FILTER", "Content blocked"));
        topology.send(RUN, responseDone(ResponseStatus.ERROR));

        assertThat(topology.emitted()).containsExactly(
                "turn_started",
                "message created v1 origin=agent \"Here is how to\"",
                "error completed v2 CONTENT_FILTER: Content blocked",
                "turn_completed error");
    }

    @Test
    void tc08_responseError() {
        topology.send(RUN, responseStart("turn-1", "anthropic"));
        topology.send(RUN, responseError("RATE_LIMIT", "Too many requests"));

        assertThat(topology.emitted()).containsExactly(
                "turn_started",
                "turn_error RATE_LIMIT: Too many requests");
    }

    @Test
    void tc09_batchTimeoutEmitsOnlyContentNotYetEmitted() {
        topology.send(RUN, responseStart("turn-1", "anthropic"));
        topology.send(RUN, itemStart("msg-1", "message"));
        topology.send(RUN, delta("msg-1", "0123456789"));
        assertThat(topology.emitted()).containsExactly("turn_started", "message created v1 origin=agent \"0123456789\"");

        topology.advanceWallClock(Duration.ofMillis(1_500));
        assertThat(topology.emitted()).as("nothing new, nothing emitted").isEmpty();

        topology.send(RUN, delta("msg-1", "abcdefghij"));
        topology.advanceWallClock(Duration.ofMillis(500));
        assertThat(topology.emitted()).as("the timer has not fired yet").isEmpty();

        topology.advanceWallClock(Duration.ofMillis(600));
        assertThat(topology.emitted()).containsExactly("message updated v2 origin=agent \"0123456789abcdefghij\"");

        topology.send(RUN, done("msg-1"));
        topology.send(RUN, responseDone(ResponseStatus.COMPLETE));
        assertThat(topology.emitted()).containsExactly(
                "message completed v3 origin=agent \"0123456789abcdefghij\"",
                "turn_completed complete");
    }

    @Test
    void tc09_everyDeltaResetsTheBatchTimer() {
        topology.send(RUN, responseStart("turn-1", "anthropic"));
        topology.send(RUN, itemStart("msg-1", "message"));
        topology.send(RUN, delta("msg-1", "a"));
        topology.emitted();
        for (int i = 0; i < 5; i++) {
            topology.advanceWallClock(Duration.ofMillis(800));
            topology.send(RUN, delta("msg-1", "b"));
        }
        assertThat(topology.emitted()).as("deltas keep arriving within the timeout").isEmpty();

        topology.advanceWallClock(Duration.ofMillis(1_200));
        assertThat(topology.emitted()).containsExactly("message updated v2 origin=agent \"abbbbb\"");
    }

    @Test
    void tc10_batchGradientProgression() {
        topology.send(RUN, responseStart("turn-1", "anthropic"));
        topology.send(RUN, itemStart("msg-1", "message"));
        for (int i = 0; i < 500; i++) {
            topology.send(RUN, delta("msg-1", "abcd"));
        }
        topology.send(RUN, done("msg-1"));
        topology.send(RUN, responseDone(ResponseStatus.COMPLETE));

        List<UIUpsert> upserts = topology.upserts().stream()
                .map(UpsertEnvelope::payload).filter(UIUpsert.class::isInstance).map(UIUpsert.class::cast).toList();
        assertThat(upserts).extracting(u -> u.changeType() + "@" + u.content().length() / 4).containsExactly(
                "created@1", "updated@10", "updated@20", "updated@40", "updated@60", "updated@110", "updated@160",
                "updated@210", "updated@260", "updated@360", "updated@460", "completed@500");
    }

    @Test
    void tc11_emptyContentItem() {
        topology.send(RUN, responseStart("turn-1", "anthropic"));
        topology.send(RUN, itemStart("msg-1", "message"));
        topology.send(RUN, doneWithContent("msg-1", "message", "", null));
        topology.send(RUN, responseDone(ResponseStatus.COMPLETE));

        assertThat(topology.emitted()).containsExactly(
                "turn_started",
                "message completed v1 origin=agent \"\"",
                "turn_completed complete");
    }
}
