package io.turnstream.gateway.ownership;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.gateway.loop.TurnPublisher;
import io.turnstream.model.ControlMessage;
import io.turnstream.model.Json;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.Topics;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.EmbeddedKafkaBroker;
import io.turnstream.runtime.ServiceMetrics;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.TenantClaims;
import io.turnstream.runtime.TopicAdmin;
import io.turnstream.runtime.TraceContext;
import io.turnstream.testsupport.UsesBroker;
import java.time.Clock;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/** An owned partition's transactional sends on a real broker. */
@UsesBroker
class OwnedPartitionSendsTest {

    /**
     * A turn's send chained on another send's completion. Run on Kafka's I/O thread (as the partition's sends
     * completed before), a send of a topic the producer has not written yet waits for metadata which only that
     * thread fetches, until {@code max.block.ms} (60 s), and fails: the trap {@code GatewayProducer} fell in.
     */
    @Test
    void aSendChainedOnAnotherSendsCompletionIsSent() throws Exception {
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.onFreePort().start()) {
            Properties kafka = new Properties();
            kafka.put("bootstrap.servers", broker.bootstrapServers());
            TopicAdmin.createAll(kafka, Topics.DEFAULTS, 1, (short) 1);
            Properties props = new Properties();
            props.putAll(kafka);
            props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "owned-partition-sends-0");
            KafkaProducer<String, byte[]> producer = new KafkaProducer<>(props, new StringSerializer(),
                    new ByteArraySerializer());
            try (OwnedPartition owned = new OwnedPartition(new TopicPartition(Topics.DEFAULTS.turnRequests(), 0),
                    new OwnedPartition.TransactionalProducer(producer, () -> { }), Topics.DEFAULTS, WireFormat.JSON,
                    TenantClaims.UNSIGNED, Clock.systemUTC())) {
                TurnRequestRecord request = TurnRequestRecord.request("turn-1", "thread-1", "run-1", null, 1,
                        Json.MAPPER.createObjectNode().put("prompt", "hi"));
                TraceContext trace = TraceContext.fresh();
                TurnPublisher publisher = owned.publisherFor(request, trace);

                CompletableFuture<Void> chained = publisher.rawEvent("run-1", trace, new StreamPayload.ResponseStart(
                        "run-1", "turn-1", "thread-1", null, "m", "simulated", 1L))
                        .thenCompose(sent -> publisher.control(ControlMessage.cancel("turn-1", "chained")));

                chained.get(30, TimeUnit.SECONDS);
                assertThat(chained).isCompleted();
            }
        }
    }

    /**
     * The turn producer lingers a commit interval ({@link OwnedPartition#producerProperties}): the commit, not the
     * linger, sends a transaction's writes. Here the producer would linger a minute, and the commit still returns
     * with the write on the broker.
     */
    @Test
    void aCommitSendsWhatLingers() throws Exception {
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.onFreePort().start();
             ServiceMetrics metrics = ServiceMetrics.create("owned-partition-sends-test",
                     Settings.of(new Properties()))) {
            Properties kafka = new Properties();
            kafka.put("bootstrap.servers", broker.bootstrapServers());
            TopicAdmin.createAll(kafka, Topics.DEFAULTS, 1, (short) 1);
            TopicPartition partition = new TopicPartition(Topics.DEFAULTS.turnRequests(), 0);
            try (OwnedPartition owned = new OwnedPartition(partition, OwnedPartition.kafkaProducer(partition, kafka,
                    "owned-partition-sends", Duration.ofMinutes(1), metrics), Topics.DEFAULTS, WireFormat.JSON,
                    TenantClaims.UNSIGNED, Clock.systemUTC())) {
                TurnRequestRecord request = TurnRequestRecord.request("turn-1", "thread-1", "run-1", null, 1,
                        Json.MAPPER.createObjectNode().put("prompt", "hi"));
                TraceContext trace = TraceContext.fresh();
                CompletableFuture<Void> sent = owned.publisherFor(request, trace).rawEvent("run-1", trace,
                        new StreamPayload.ResponseStart("run-1", "turn-1", "thread-1", null, "m", "simulated", 1L));
                assertThat(sent).as("lingering until the commit").isNotDone();

                assertThat(owned.commit(0, new ConsumerGroupMetadata("owned-partition-sends"))).isTrue();

                sent.get(30, TimeUnit.SECONDS);
                assertThat(sent).isCompleted();
            }
        }
    }
}
