package io.turnstream.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.model.ControlMessage;
import io.turnstream.model.Json;
import io.turnstream.model.Topics;
import io.turnstream.testsupport.UsesBroker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * On a real broker: a cancel accepted while no gateway ran the turn (its owner stopped, cut off inside its step, so
 * nothing of the cancel is in any transaction) reaches the gateway that takes the turn over, although that gateway
 * started after the cancel and its inbox never saw it: the turn ends {@code aborted} without calling the model again.
 * This is what the next owner does after a commit that failed rolled the owner's {@code aborted} end back.
 */
@UsesBroker
class CancelAcrossOwnersTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    static Path home;

    @RegisterExtension
    static final BrokerStack stack = new BrokerStack();
    private static OwnerStoppedInsideAStep stopped;

    @BeforeAll
    static void startEverything() throws Exception {
        stack.broker(1);
        stack.topology("cancel-across-owners", home.resolve("state"));
        stopped = new OwnerStoppedInsideAStep(stack);
    }

    @Test
    void aCancelAcceptedWhileNoGatewayRanTheTurnEndsItAtTheNextOwner() throws Exception {
        String turnId = stopped.startAndStop("a long answer").turnId();
        try (KafkaProducer<String, byte[]> producer = producer()) {
            producer.send(new ProducerRecord<>(Topics.DEFAULTS.control(), turnId,
                    Json.toBytes(ControlMessage.cancel(turnId, "stopped while no gateway ran it")))).get();
        }

        Gateway second = stack.gateway(stack.gatewaySettings(), stopped.provider());
        second.views().loaded().get(WAIT.toSeconds(), TimeUnit.SECONDS);

        await("the next owner ends the turn").atMost(WAIT).until(() -> second.views().snapshot(turnId, null)
                .map(snapshot -> snapshot.status().ended()).orElse(false));
        assertThat(second.views().snapshot(turnId, null).orElseThrow().status()).isEqualTo(TurnPhase.ABORTED);
        assertThat(stopped.calls()).as("the model is not called again").isEqualTo(1);
    }

    private static KafkaProducer<String, byte[]> producer() {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, stack.bootstrapServers());
        return new KafkaProducer<>(props, new StringSerializer(), new ByteArraySerializer());
    }
}
