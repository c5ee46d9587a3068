package io.turnstream.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.turnstream.gateway.provider.ErrorCodes;
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.gateway.view.TurnSnapshot;
import io.turnstream.model.Topics;
import io.turnstream.testsupport.UsesBroker;
import java.nio.charset.StandardCharsets;
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
 * On a real broker and topology: a turn taken over from a stopped gateway, of which {@code llm.raw-events} holds a
 * record no one can read (its end, maybe), ends at the next owner with {@code turn_error} {@code TURN_CANNOT_RUN}
 * naming the record, without calling the model again. Before, it was resumed, and at every takeover again.
 */
@UsesBroker
class UnreadableRawEventTest {

    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    static Path home;

    @RegisterExtension
    static final BrokerStack stack = new BrokerStack();
    private static OwnerStoppedInsideAStep stopped;

    @BeforeAll
    static void startEverything() throws Exception {
        stack.broker(1);
        stack.topology("unreadable-raw-event", home.resolve("state"));
        stopped = new OwnerStoppedInsideAStep(stack);
    }

    @Test
    void aTurnWithAnUnreadableRawEventEndsAtTheNextOwnerWithoutCallingTheModelAgain() throws Exception {
        TurnStatus turn = stopped.startAndStop("a long answer");
        try (KafkaProducer<String, byte[]> producer = producer()) {
            producer.send(new ProducerRecord<>(Topics.DEFAULTS.rawEvents(), turn.runId(),
                    "{\"type\":\"response_done\",\"payload\":".getBytes(StandardCharsets.UTF_8))).get();
        }

        Gateway second = stack.gateway(stack.gatewaySettings(), stopped.provider());
        second.views().loaded().get(WAIT.toSeconds(), TimeUnit.SECONDS);

        await("the next owner ends the turn").atMost(WAIT).until(() -> second.views().snapshot(turn.turnId(), null)
                .map(snapshot -> snapshot.status().ended()).orElse(false));
        TurnSnapshot ended = second.views().snapshot(turn.turnId(), null).orElseThrow();
        assertThat(ended.status()).isEqualTo(TurnPhase.ERROR);
        assertThat(ended.turn().error().code()).isEqualTo(ErrorCodes.TURN_CANNOT_RUN);
        assertThat(ended.turn().error().message()).startsWith("the turn cannot be resumed: its raw event at "
                + Topics.DEFAULTS.rawEvents() + "-0@");
        assertThat(stopped.calls()).as("the model is not called again").isEqualTo(1);
    }

    private static KafkaProducer<String, byte[]> producer() {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, stack.bootstrapServers());
        return new KafkaProducer<>(props, new StringSerializer(), new ByteArraySerializer());
    }
}
