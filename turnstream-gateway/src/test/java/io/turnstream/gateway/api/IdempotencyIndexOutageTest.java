package io.turnstream.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.turnstream.gateway.BrokerStack;
import io.turnstream.gateway.http.ApiError;
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.model.Json;
import io.turnstream.model.Topics;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.schema.RegistryOutage;
import io.turnstream.testsupport.UsesBroker;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The {@code Idempotency-Key} index on its own reader, on an embedded broker, through a schema registry outage
 * ({@link RegistryOutage}: every read fails as an Avro read does while the registry cannot be reached). The reader
 * reads the request record again until it can; meanwhile what the index has not read is not taken for known.
 */
@UsesBroker
class IdempotencyIndexOutageTest {

    private static final Duration PATIENCE = Duration.ofSeconds(60);
    private static final String TOPIC = Topics.DEFAULTS.turnRequests();

    @RegisterExtension
    static final BrokerStack stack = new BrokerStack();

    @BeforeAll
    static void startBroker() throws Exception {
        stack.broker(1);
    }

    /**
     * A request put on Kafka that the index cannot read back is a 503, not taken for one that won its key (before, it
     * was after the verdict's wait); so is a request under a key the index does not know meanwhile. Sent again once
     * the index reads on, the first request gets its turn, the one turn started.
     */
    @Test
    void whileItsReaderWaitsForTheRegistryKeyedRequestsAre503AndTheKeyIsKnownOnceItReadsOn() throws Exception {
        RegistryOutage registry = new RegistryOutage();
        registry.down = true;
        Properties kafka = new Properties();
        kafka.put("bootstrap.servers", stack.bootstrapServers());
        IdempotencyIndex index = stack.closing(IdempotencyIndex.start(kafka, TOPIC, registry, Clock.systemUTC(), 100));
        index.caughtUp().get();
        KafkaProducer<String, byte[]> producer = stack.closing(new KafkaProducer<>(kafka, new StringSerializer(),
                new ByteArraySerializer()));
        IdempotencyKeys keys = new IdempotencyKeys(index, turnId -> Optional.empty(), Clock.systemUTC(), PATIENCE);
        List<TurnStatus> started = new CopyOnWriteArrayList<>();
        Function<IdempotentStart, TurnStatus> putOnKafka = keyed -> {
            TurnStatus turn = new TurnStatus(keyed.turnId(), keyed.threadId(), keyed.runId(), TurnPhase.RUNNING);
            send(producer, registry, keyed, turn);
            started.add(turn);
            return turn;
        };

        assertThatThrownBy(() -> keys.start("acme", "k1", "POST /v1/turns\n{}", putOnKafka))
                .as("its request on Kafka, not read back").satisfies(IdempotencyIndexOutageTest::isARetryLater);
        assertThat(index.waitingFor()).as("its reader's").isPresent();
        assertThatThrownBy(() -> keys.start("acme", "k2", "POST /v1/turns\n{}", putOnKafka))
                .as("a key the index does not know").satisfies(IdempotencyIndexOutageTest::isARetryLater);
        assertThat(started).as("only the first put on Kafka").hasSize(1);

        registry.down = false;
        await().atMost(PATIENCE).until(() -> index.waitingFor().isEmpty());

        IdempotencyKeys.Started again = keys.start("acme", "k1", "POST /v1/turns\n{}", putOnKafka);
        assertThat(again.replayed()).isTrue();
        assertThat(again.turn()).isEqualTo(started.get(0));
        assertThatThrownBy(() -> keys.start("acme", "k1", "POST /v1/turns\n{\"other\": 1}", putOnKafka))
                .isInstanceOf(ApiError.class).extracting(e -> ((ApiError) e).status()).isEqualTo(422);
        assertThat(started).as("one turn in all").hasSize(1);
    }

    private static void isARetryLater(Throwable refused) {
        assertThat(refused).isInstanceOf(ApiError.class).hasMessageContaining("cannot be checked now")
                .hasMessageContaining("cannot be reached");
        assertThat(((ApiError) refused).status()).isEqualTo(503);
        assertThat(((ApiError) refused).headers()).containsKey("Retry-After");
    }

    /** The request record as the gateway that accepts a keyed request writes it, with the key in its headers. */
    private static void send(KafkaProducer<String, byte[]> producer, RegistryOutage format, IdempotentStart keyed,
                             TurnStatus turn) {
        TurnRequestRecord request = TurnRequestRecord.request(turn.turnId(), turn.threadId(), turn.runId(),
                keyed.tenantId(), System.currentTimeMillis(), Json.MAPPER.createObjectNode().put("prompt", "a"));
        ProducerRecord<String, byte[]> record = new ProducerRecord<>(TOPIC, turn.threadId(),
                format.write(TOPIC, request));
        record.headers().add(IdempotentStart.KEY_HEADER, keyed.key().getBytes(StandardCharsets.UTF_8));
        record.headers().add(IdempotentStart.FINGERPRINT_HEADER, keyed.fingerprint().getBytes(StandardCharsets.UTF_8));
        try {
            producer.send(record).get();
        } catch (InterruptedException | ExecutionException e) {
            throw new IllegalStateException("cannot put the request on Kafka", e);
        }
    }
}
