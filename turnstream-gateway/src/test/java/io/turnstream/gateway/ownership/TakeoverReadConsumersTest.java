package io.turnstream.gateway.ownership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.turnstream.model.Json;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.Topics;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.ContractBroker;
import io.turnstream.runtime.GrouplessConsumer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import io.turnstream.testsupport.UsesBroker;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A takeover's reads on a real broker find their consumers open: the gateway opens them ahead ({@link
 * TurnResumer#warmUp}), with the metadata and connections a new consumer first waits for, and keeps them between
 * reads. Before, every read of a takeover (its partitions' requests, then its turns' raw events, cancels and tool
 * results) opened a consumer of its own.
 */
@UsesBroker
class TakeoverReadConsumersTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Topics TOPICS = Topics.DEFAULTS;

    private static ContractBroker broker;
    private static Properties kafka;

    @BeforeAll
    static void startBroker() throws Exception {
        broker = ContractBroker.start(2);
        kafka = broker.clientProperties();
    }

    @AfterAll
    static void stopBroker() {
        broker.close();
    }

    @Test
    void aTakeoversReadsUseTheConsumersOpenedAheadAndKeepThem() {
        TurnRequestRecord request = TurnRequestRecord.request("turn-1", "thread-1", "run-1", null, 1,
                Json.MAPPER.createObjectNode().put("prompt", "hi"));
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(kafka, new StringSerializer(),
                new ByteArraySerializer())) {
            StreamPayload start = new StreamPayload.ResponseStart("run-1", "turn-1", "thread-1", null, "m",
                    "simulated", 1L);
            producer.send(new ProducerRecord<>(TOPICS.rawEvents(), "run-1", WireFormat.JSON.write(TOPICS.rawEvents(),
                    new StreamEvent("event-1", System.currentTimeMillis(), null, "run-1", start.type(), start))));
            producer.send(new ProducerRecord<>(TOPICS.turnRequests(), 0, "thread-1",
                    WireFormat.JSON.write(TOPICS.turnRequests(), request)));
        }
        AtomicInteger opened = new AtomicInteger();
        try (TurnResumer resumer = new TurnResumer(TOPICS, WireFormat.JSON, Admin.create(kafka), () -> {
            opened.incrementAndGet();
            return new GrouplessConsumer("takeover-read-consumers-test", kafka);
        })) {
            resumer.warmUp();
            await("the consumers are open and connected").atMost(WAIT)
                    .until(() -> resumer.idleConsumers() == TurnResumer.KEPT_CONSUMERS);

            TurnResumer.PartitionsRead requests = resumer.readToEnd(Map.of(new TopicPartition(TOPICS.turnRequests(),
                    0), 0L));
            TurnResumer.TurnLog log = resumer.turnsOf(List.of(request));
            List<StreamPayload> rawEvents = log.rawEvents("run-1", Instant.EPOCH);
            log.commands("turn-1", Instant.EPOCH);
            log.toolResults("turn-1", Instant.EPOCH);

            assertThat(requests.records().values()).singleElement().asList().hasSize(1);
            assertThat(rawEvents).singleElement().isInstanceOf(StreamPayload.ResponseStart.class);
            assertThat(opened).as("the takeover's four reads (three at once) opened no consumer").hasValue(
                    TurnResumer.KEPT_CONSUMERS);
            assertThat(resumer.idleConsumers()).as("each kept for the next takeover")
                    .isEqualTo(TurnResumer.KEPT_CONSUMERS);
        }
    }
}
