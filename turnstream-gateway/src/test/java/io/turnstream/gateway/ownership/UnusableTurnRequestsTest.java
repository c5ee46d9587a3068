package io.turnstream.gateway.ownership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.turnstream.gateway.BrokerStack;
import io.turnstream.gateway.Gateway;
import io.turnstream.gateway.sim.SimulatedAnthropicServer;
import io.turnstream.gateway.sim.SimulatedReply;
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.gateway.turn.TurnRequest;
import io.turnstream.model.DeadLetterHeaders;
import io.turnstream.model.Json;
import io.turnstream.model.Topics;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.testsupport.UsesBroker;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * On a real broker (one partition of {@code llm.turn-requests}, the real topology): records no gateway can use,
 * written before a turn on the same partition, go to {@code llm.raw-events.dlq} with their reason and source, and
 * the turn after them runs to its end.
 */
@UsesBroker
class UnusableTurnRequestsTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Topics TOPICS = Topics.DEFAULTS;

    @TempDir
    static Path home;

    @RegisterExtension
    static final BrokerStack stack = new BrokerStack();
    private static Gateway gateway;

    @BeforeAll
    static void startEverything() throws Exception {
        stack.broker(1);
        stack.topology("unusable-requests", home.resolve("state"));
        SimulatedAnthropicServer provider = stack.closing(SimulatedAnthropicServer.start(0,
                request -> SimulatedReply.answer().text("Answered."), 0));
        gateway = stack.gateway(stack.gatewaySettings(), provider);
        gateway.views().loaded().get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    @Test
    void unusableRecordsAreDeadLetteredAndTheTurnAfterThemRuns() throws Exception {
        byte[] notJson = "{not json".getBytes(StandardCharsets.UTF_8);
        byte[] noTurnId = Json.toBytes(TurnRequestRecord.request(null, "thread-x", "run-x", null, 1,
                Json.MAPPER.createObjectNode().put("prompt", "hi")));
        try (KafkaProducer<String, byte[]> producer = producer()) {
            producer.send(new ProducerRecord<>(TOPICS.turnRequests(), "thread-x", notJson)).get();
            producer.send(new ProducerRecord<>(TOPICS.turnRequests(), "thread-x", noTurnId)).get();
        }

        String turnId = gateway.admission().startTurn(TurnRequest.prompt(null, null, "after them")).turnId();

        await("the turn after them ends").atMost(WAIT).until(() -> gateway.views().snapshot(turnId, null)
                .map(snapshot -> snapshot.status() == TurnPhase.COMPLETE).orElse(false));
        List<ConsumerRecord<String, byte[]>> dead = deadLetters(2);
        assertThat(dead).extracting(record -> header(record, DeadLetterHeaders.SOURCE))
                .containsExactly(TOPICS.turnRequests() + "-0@0", TOPICS.turnRequests() + "-0@1");
        assertThat(header(dead.get(0), DeadLetterHeaders.REASON)).startsWith("not a turn request record: ");
        assertThat(header(dead.get(1), DeadLetterHeaders.REASON))
                .isEqualTo("a turn request record needs its type, turnId, threadId and runId");
        assertThat(dead).extracting(ConsumerRecord::key).containsOnly("thread-x");
        assertThat(dead.get(0).value()).isEqualTo(notJson);
    }

    private static KafkaProducer<String, byte[]> producer() {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, stack.bootstrapServers());
        return new KafkaProducer<>(props, new StringSerializer(), new ByteArraySerializer());
    }

    /** The first {@code count} committed records of the dead-letter topic. */
    private static List<ConsumerRecord<String, byte[]>> deadLetters(int count) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, stack.bootstrapServers());
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        List<ConsumerRecord<String, byte[]>> read = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                new ByteArrayDeserializer())) {
            TopicPartition partition = new TopicPartition(TOPICS.deadLetters(), 0);
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            await("dead letters").atMost(WAIT).until(() -> {
                consumer.poll(Duration.ofMillis(200)).forEach(read::add);
                return read.size() >= count;
            });
        }
        return read.subList(0, count);
    }

    private static String header(ConsumerRecord<String, byte[]> record, String name) {
        return new String(record.headers().lastHeader(name).value(), StandardCharsets.UTF_8);
    }
}
