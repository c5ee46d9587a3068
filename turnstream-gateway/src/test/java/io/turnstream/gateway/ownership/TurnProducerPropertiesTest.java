package io.turnstream.gateway.ownership;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Properties;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** The settings of a partition's turn producer ({@link OwnedPartition#producerProperties}). */
class TurnProducerPropertiesTest {

    private static final TopicPartition P3 = new TopicPartition("llm.turn-requests", 3);

    @Test
    void itLingersACommitIntervalAndIsFencedByThePartitionsTransactionalId() {
        Properties props = OwnedPartition.producerProperties(P3, new Properties(), "gateways", Duration.ofMillis(75));

        assertThat(props.getProperty(ProducerConfig.LINGER_MS_CONFIG)).isEqualTo("75");
        assertThat(props.getProperty(ProducerConfig.TRANSACTIONAL_ID_CONFIG)).isEqualTo("gateways-turns-3");
        assertThat(props.getProperty(ProducerConfig.ACKS_CONFIG)).isEqualTo("all");
    }

    @Test
    void aConfiguredLingerIsKept() {
        Properties kafka = new Properties();
        kafka.put(ProducerConfig.LINGER_MS_CONFIG, "5");

        Properties props = OwnedPartition.producerProperties(P3, kafka, "gateways", Duration.ofMillis(100));

        assertThat(props.getProperty(ProducerConfig.LINGER_MS_CONFIG)).isEqualTo("5");
    }
}
