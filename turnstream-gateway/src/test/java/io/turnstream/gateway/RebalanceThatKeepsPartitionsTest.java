package io.turnstream.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.turnstream.gateway.sim.SimulatedAnthropicServer;
import io.turnstream.gateway.sim.SimulatedReply;
import io.turnstream.gateway.sim.SimulatedText;
import io.turnstream.gateway.turn.TurnRequest;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.model.Topics;
import io.turnstream.testsupport.UsesBroker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * On a real broker: the gateways' group rebalances again and again while one gateway's turns stream and end (another
 * member joins the group, on another topic, and leaves), and every rebalance leaves the gateway its partitions. No
 * step is called twice: each turn's one model call streams to its end. Before, an offset committed with the
 * generation before a rebalance was refused with the turns' writes, and the gateway took its own partitions over
 * again and called their steps again ({@code OwnedPartitionRebalanceTest} shows the refusal itself).
 */
@UsesBroker
class RebalanceThatKeepsPartitionsTest {

    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final int TURNS = 24;
    private static final String BYSTANDERS = "rebalance-bystanders";

    @RegisterExtension
    static final BrokerStack stack = new BrokerStack();
    private static final Map<String, AtomicInteger> callsByPrompt = new ConcurrentHashMap<>();
    private static SimulatedAnthropicServer provider;
    private static RawEventsTap raw;
    private static Gateway gateway;

    @BeforeAll
    static void startGateway() throws Exception {
        stack.broker(3);
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", stack.bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic(BYSTANDERS, 1, (short) 1))).all().get();
        }
        // turn i streams 10 + 10 i words at 40 a second: the turns end one after the other over six seconds
        provider = stack.closing(SimulatedAnthropicServer.start(0, request -> {
            String prompt = request.lastUserText();
            callsByPrompt.computeIfAbsent(prompt, p -> new AtomicInteger()).incrementAndGet();
            int turn = Integer.parseInt(prompt.substring(prompt.lastIndexOf(' ') + 1));
            return SimulatedReply.answer().text(SimulatedText.words(10 + 10 * turn)).tokensPerSecond(40);
        }, 0));
        raw = stack.closing(new RawEventsTap(stack.bootstrapServers(), Topics.DEFAULTS, call -> null));
        gateway = stack.gateway(stack.gatewaySettings(), provider);
    }

    @Test
    void rebalancesThatLeaveTheGatewayItsPartitionsCallNoStepAgain() {
        List<TurnStatus> turns = new ArrayList<>();
        for (int i = 0; i < TURNS; i++) {
            turns.add(gateway.admission().startTurn(TurnRequest.prompt(null, null, "turn " + i)));
        }
        await("the first turns stream").atMost(WAIT).until(() -> callsByPrompt.size() >= TURNS / 2);

        int rebalances = 0;
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!allEnded(turns) && System.nanoTime() < deadline) {
            try (KafkaConsumer<String, byte[]> bystander = bystander()) {
                await("a bystander joins the gateways' group").atMost(WAIT)
                        .until(() -> !bystander.poll(Duration.ofMillis(100)).isEmpty()
                                || !bystander.assignment().isEmpty());
            }
            rebalances += 2;
        }

        assertThat(turns).as("every turn ends").allMatch(turn -> raw.terminal(turn.runId()).isPresent());
        assertThat(rebalances).as("the group rebalanced while the turns ran").isGreaterThanOrEqualTo(2);
        assertThat(callsByPrompt).as("one model call per turn").hasSize(TURNS)
                .allSatisfy((prompt, calls) -> assertThat(calls.get()).as(prompt).isEqualTo(1));
    }

    private static boolean allEnded(List<TurnStatus> turns) {
        return turns.stream().allMatch(turn -> raw.terminal(turn.runId()).isPresent());
    }

    /** A member of the gateways' group (its default id) that reads another topic: it takes none of their partitions. */
    private static KafkaConsumer<String, byte[]> bystander() {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, stack.bootstrapServers());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, "turnstream-gateway");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName());
        KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                new ByteArrayDeserializer());
        consumer.subscribe(List.of(BYSTANDERS));
        return consumer;
    }
}
