package io.turnstream.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.Topics;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

// turnstream-test-support's @UsesBroker, which this module cannot depend on (test-support depends on it)
@Tag("broker")
class EmbeddedKafkaBrokerTest {

    @Test
    void createsContractTopicsAndCarriesTransactionalRecordsAcrossARestart() throws Exception {
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.onFreePort().start()) {
            Properties admin = new Properties();
            admin.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());

            assertThat(TopicAdmin.createAll(admin, Topics.DEFAULTS, 2, (short) 1))
                    .containsExactlyInAnyOrderElementsOf(Topics.DEFAULTS.byRole().values());
            assertThat(TopicAdmin.createAll(admin, Topics.DEFAULTS, 2, (short) 1)).isEmpty();
            try (Admin client = Admin.create(admin)) {
                ConfigResource itemState = new ConfigResource(ConfigResource.Type.TOPIC, Topics.DEFAULTS.itemState());
                ConfigEntry policy = client.describeConfigs(List.of(itemState)).all().get()
                        .get(itemState).get("cleanup.policy");
                assertThat(policy.value()).isEqualTo("compact");
            }

            produceTransactionally(broker, "before-restart");
            broker.stop();
            broker.start();
            produceTransactionally(broker, "after-restart");

            assertThat(readCommitted(broker, 2)).containsExactly("before-restart", "after-restart");
        }
    }

    private static void produceTransactionally(EmbeddedKafkaBroker broker, String value) {
        Map<String, Object> config = Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
                ProducerConfig.TRANSACTIONAL_ID_CONFIG, "embedded-broker-test",
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(config)) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(Topics.DEFAULTS.upserts(), 0, "turn-1", value));
            producer.commitTransaction();
        }
    }

    private static List<String> readCommitted(EmbeddedKafkaBroker broker, int count) {
        Map<String, Object> config = Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, "embedded-broker-test",
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        List<String> values = new java.util.ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config)) {
            consumer.subscribe(List.of(Topics.DEFAULTS.upserts()));
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (values.size() < count && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    values.add(record.value());
                }
            }
        }
        return values;
    }
}
