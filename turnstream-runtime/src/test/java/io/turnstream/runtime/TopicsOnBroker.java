package io.turnstream.runtime;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real broker for reader tests, started with the test class and stopped after its tests: fresh
 * topics, string records written to chosen partitions.
 */
final class TopicsOnBroker implements AfterAllCallback {

    private final EmbeddedKafkaBroker broker;
    private final Admin admin;
    private final KafkaProducer<String, String> producer;

    private TopicsOnBroker(EmbeddedKafkaBroker broker) {
        this.broker = broker;
        this.admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()));
        this.producer = new KafkaProducer<>(producerProperties());
    }

    static TopicsOnBroker start() {
        return new TopicsOnBroker(EmbeddedKafkaBroker.onFreePort().start());
    }

    EmbeddedKafkaBroker broker() {
        return broker;
    }

    Admin admin() {
        return admin;
    }

    String newTopic(int partitions) throws Exception {
        String topic = "reader-" + UUID.randomUUID();
        admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
        return topic;
    }

    void write(String topic, int partition, String value) throws Exception {
        producer.send(new ProducerRecord<>(topic, partition, "key", value)).get();
    }

    void write(String topic, int partition, Instant at, String value) throws Exception {
        producer.send(new ProducerRecord<>(topic, partition, at.toEpochMilli(), "key", value)).get();
    }

    /** What a reader needs to reach the broker. */
    Properties clientProperties() {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        return props;
    }

    Properties producerProperties() {
        Properties props = clientProperties();
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return props;
    }

    static String valueOf(ConsumerRecord<String, byte[]> record) {
        return new String(record.value(), StandardCharsets.UTF_8);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        producer.close();
        admin.close();
        broker.close();
    }
}
