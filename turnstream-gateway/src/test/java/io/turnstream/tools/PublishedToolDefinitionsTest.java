package io.turnstream.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.gateway.Gateway;
import io.turnstream.gateway.GatewayConfig;
import io.turnstream.gateway.ProviderEndpoints;
import io.turnstream.gateway.provider.ToolDefinition;
import io.turnstream.gateway.sim.SimulatedAnthropicServer;
import io.turnstream.gateway.sim.SimulatedReply;
import io.turnstream.gateway.sim.SimulatedRequest;
import io.turnstream.gateway.turn.TurnRequest;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.runtime.EmbeddedKafkaBroker;
import io.turnstream.testsupport.UsesBroker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The gateway offers the model what the tool executors published on {@code llm.tool-definitions}: a
 * plugin tool registered only in the executor is offered; a tool an executor no longer runs is
 * withdrawn (tombstone); before any executor has published, a turn is offered no tools.
 */
@ExtendWith(SharedBroker.class)
@UsesBroker
class PublishedToolDefinitionsTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final String PLUGIN = "shout";

    private static EmbeddedKafkaBroker broker;

    /** The tool names the simulated provider was offered, per prompt. */
    private final Map<String, List<String>> offeredPerPrompt = new ConcurrentHashMap<>();
    private final List<AutoCloseable> started = new ArrayList<>();
    private KafkaToolsFixture kafka;
    private Gateway gateway;

    @BeforeAll
    static void useTheSharedBroker(EmbeddedKafkaBroker shared) {
        broker = shared;
    }

    @AfterEach
    void stop() throws Exception {
        for (int i = started.size() - 1; i >= 0; i--) {
            started.get(i).close();
        }
        kafka.close();
    }

    @Test
    void aPluginToolOfTheExecutorOnlyIsOfferedAndWithdrawnWhenNoExecutorRunsIt(TestInfo test) {
        given(test);
        assertThat(gateway.offeredTools()).isEmpty();
        assertThat(offeredIn("before any executor")).isEmpty();

        ToolExecutorService withPlugin = startExecutor(ToolRegistry.installed().plus(shoutPlugin()));
        await().atMost(TIMEOUT).until(() -> names(gateway.offeredTools()).contains(PLUGIN));
        assertThat(offeredIn("with the plugin")).contains(PLUGIN, "read_file", "list_files");
        ToolDefinition shout = gateway.offeredTools().stream().filter(tool -> PLUGIN.equals(tool.name())).findFirst().orElseThrow();
        assertThat(shout.description()).isEqualTo("test tool " + PLUGIN);
        assertThat(shout.parameters().path("type").asText()).isEqualTo("object");

        withPlugin.close();
        startExecutor(ToolRegistry.installed());
        await().atMost(TIMEOUT).until(() -> !names(gateway.offeredTools()).contains(PLUGIN));
        assertThat(offeredIn("after the plugin was removed")).doesNotContain(PLUGIN).contains("read_file");
    }

    private void given(TestInfo test) {
        kafka = new KafkaToolsFixture(broker, test.getTestMethod().orElseThrow().getName(), 1);
        SimulatedAnthropicServer provider = SimulatedAnthropicServer.start(0, this::recordOffer, 0);
        started.add(provider);
        gateway = Gateway.start(kafka.settings().with(GatewayConfig.PREFIX + "port", "0"),
                ProviderEndpoints.simulatedOnly(provider.baseUrl()), List.of());
        started.add(gateway);
    }

    private ToolExecutorService startExecutor(ToolRegistry registry) {
        ToolExecutorService executor = kafka.start(registry);
        started.add(executor);
        return executor;
    }

    /** Runs a turn and returns the tool names its model call was offered. */
    private List<String> offeredIn(String prompt) {
        TurnStatus turn = gateway.admission().startTurn(TurnRequest.prompt("simulated", null, prompt));
        // the turn runs once the gateway takes it from llm.turn-requests
        await().atMost(TIMEOUT).until(() -> gateway.commands().status(turn.turnId())
                .filter(status -> status.status().ended()).isPresent());
        return offeredPerPrompt.get(prompt);
    }

    private SimulatedReply recordOffer(SimulatedRequest request) {
        List<String> names = new ArrayList<>();
        request.body().path("tools").forEach(tool -> names.add(tool.path("name").asText()));
        offeredPerPrompt.put(request.lastUserText(), names);
        return SimulatedReply.answer().text("Noted.");
    }

    private static ScriptedTool shoutPlugin() {
        return ScriptedTool.safe(PLUGIN, (JsonNode arguments, ToolContext context) -> TextNode.valueOf("HELLO"));
    }

    private static List<String> names(List<ToolDefinition> tools) {
        return tools.stream().map(ToolDefinition::name).toList();
    }
}
