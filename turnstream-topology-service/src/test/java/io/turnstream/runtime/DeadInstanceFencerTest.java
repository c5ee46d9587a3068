package io.turnstream.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.turnstream.model.Topics;
import io.turnstream.testsupport.UsesBroker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A dead Kafka Streams instance's open transaction is aborted at the rebalance that drops it from the group, not at
 * its transaction timeout; a live instance's is left alone (docs/runtime.md, "Failover").
 */
class DeadInstanceFencerTest {

    private static final String APP = "turnstream-topology";
    private static final String LIVE = "0b8e7ccd-3c32-4b83-a4e9-6c26d77fc27f";
    private static final String DEAD = "f57241c7-1749-481a-becb-f717948a09a8";

    @Test
    void theTransactionsOfProcessIdsNoMemberHasAreTheDeadInstances() {
        List<String> members = List.of(APP + "-" + LIVE + "-StreamThread-1-consumer",
                APP + "-" + LIVE + "-StreamThread-2-consumer");
        List<String> ongoing = List.of(APP + "-" + LIVE + "-1", APP + "-" + DEAD + "-1", APP + "-" + DEAD + "-2",
                APP + "-v2-" + DEAD + "-1", "other-" + DEAD + "-1", APP + "-" + DEAD);

        assertThat(DeadInstanceFencer.transactionsOfDeadInstances(APP, ongoing, members))
                .containsExactly(APP + "-" + DEAD + "-1", APP + "-" + DEAD + "-2");
    }

    @Test
    void aMemberWithoutAProcessIdInItsClientIdMakesItStandAside() {
        List<String> ongoing = List.of(APP + "-" + DEAD + "-1");

        assertThat(DeadInstanceFencer.transactionsOfDeadInstances(APP, ongoing,
                List.of(APP + "-" + LIVE + "-StreamThread-1-consumer", "my-client-StreamThread-1-consumer")))
                .as("the user's client.id").isEmpty();
        assertThat(DeadInstanceFencer.transactionsOfDeadInstances(APP, ongoing, List.of())).as("no member").isEmpty();
    }

    @Test
    void onlyExactlyOnceUnderTheClassicProtocolWithoutAUsersClientIdIsFenced() {
        Properties atLeastOnce = streamsProperties("localhost:9");
        atLeastOnce.setProperty(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
        Properties streamsGroup = streamsProperties("localhost:9");
        streamsGroup.setProperty(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
        Properties clientId = streamsProperties("localhost:9");
        clientId.setProperty(StreamsConfig.CLIENT_ID_CONFIG, "my-client");

        assertThat(DeadInstanceFencer.forApplication(atLeastOnce)).isEmpty();
        assertThat(DeadInstanceFencer.forApplication(streamsGroup)).isEmpty();
        assertThat(DeadInstanceFencer.forApplication(clientId)).isEmpty();
    }

    @Nested
    @UsesBroker
    class OnABroker {

        @TempDir
        Path dir;

        @Test
        void aDeadInstancesOpenTransactionIsAbortedAndALiveOnesCommits() throws Exception {
            try (TestCluster cluster = TestCluster.start(dir.resolve("broker"), 1, Map.of());
                 KafkaProducer<String, String> dead = transactional(cluster, APP + "-" + DEAD + "-1");
                 KafkaProducer<String, String> live = transactional(cluster, APP + "-" + LIVE + "-1");
                 KafkaConsumer<String, String> liveMember =
                         member(cluster, APP + "-" + LIVE + "-StreamThread-1-consumer")) {
                sendUncommitted(dead, "from the dead instance");
                sendUncommitted(live, "from the live instance");
                liveMember.subscribe(List.of(Topics.DEFAULTS.rawEvents()));
                Awaitility.await("the live instance is a member").atMost(Duration.ofSeconds(60))
                        .until(() -> !liveMember.poll(Duration.ofMillis(100)).isEmpty()
                                || !liveMember.assignment().isEmpty());

                try (DeadInstanceFencer fencer = DeadInstanceFencer.forApplication(
                        streamsProperties(cluster.bootstrapServers())).orElseThrow()) {
                    assertThat(fencer.fenceDeadInstances()).containsExactly(APP + "-" + DEAD + "-1");
                }

                live.commitTransaction();
                assertThatThrownBy(dead::commitTransaction).isInstanceOf(KafkaException.class);
                assertThat(readCommitted(cluster, 1)).containsExactly("from the live instance");
            }
        }

        private static KafkaProducer<String, String> transactional(TestCluster cluster, String transactionalId) {
            KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers(),
                    ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId,
                    ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                    ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class));
            producer.initTransactions();
            return producer;
        }

        private static void sendUncommitted(KafkaProducer<String, String> producer, String value) {
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(Topics.DEFAULTS.upserts(), 0, "turn-1", value));
            producer.flush();
        }

        private static KafkaConsumer<String, String> member(TestCluster cluster, String clientId) {
            return new KafkaConsumer<>(Map.of(
                    ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers(),
                    ConsumerConfig.GROUP_ID_CONFIG, APP,
                    ConsumerConfig.CLIENT_ID_CONFIG, clientId,
                    ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
                    ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class));
        }

        private static List<String> readCommitted(TestCluster cluster, int count) {
            List<String> values = new ArrayList<>();
            try (KafkaConsumer<String, String> reader = new KafkaConsumer<>(Map.of(
                    ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers(),
                    ConsumerConfig.GROUP_ID_CONFIG, "fencer-test-reader-" + UUID.randomUUID(),
                    ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                    ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
                    ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
                    ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class))) {
                reader.subscribe(List.of(Topics.DEFAULTS.upserts()));
                Awaitility.await("the committed record").atMost(Duration.ofSeconds(60)).until(() -> {
                    for (ConsumerRecord<String, String> record : reader.poll(Duration.ofMillis(200))) {
                        values.add(record.value());
                    }
                    return values.size() >= count;
                });
            }
            return values;
        }
    }

    private static Properties streamsProperties(String bootstrapServers) {
        Properties props = new Properties();
        props.setProperty(StreamsConfig.APPLICATION_ID_CONFIG, APP);
        props.setProperty(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.setProperty(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        return props;
    }
}
