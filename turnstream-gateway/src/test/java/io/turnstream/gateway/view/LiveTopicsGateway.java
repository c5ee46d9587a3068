package io.turnstream.gateway.view;

import static org.awaitility.Awaitility.await;

import io.turnstream.gateway.Gateway;
import io.turnstream.gateway.ProviderEndpoints;
import io.turnstream.model.Topics;
import io.turnstream.runtime.EmbeddedKafkaBroker;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.TopicAdmin;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A gateway on a real embedded broker with no topology: the test writes the topology's records itself
 * ({@link #newTurn}), so every seq and offset its views serve is under the test's control.
 */
public final class LiveTopicsGateway implements AutoCloseable {

    private final EmbeddedKafkaBroker broker;
    private final Gateway gateway;
    private final KafkaProducer<String, String> producer;

    private LiveTopicsGateway(EmbeddedKafkaBroker broker, Gateway gateway, KafkaProducer<String, String> producer) {
        this.broker = broker;
        this.gateway = gateway;
        this.producer = producer;
    }

    /** @param settings gateway settings over the defaults (the port is a free one) */
    public static LiveTopicsGateway start(Map<String, String> settings) throws Exception {
        EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.onFreePort().start();
        Properties props = new Properties();
        props.put("bootstrap.servers", broker.bootstrapServers());
        TopicAdmin.createAll(props, Topics.DEFAULTS, 3, (short) 1);
        props.put("turnstream.gateway.port", "0");
        props.putAll(settings);
        Gateway gateway = Gateway.start(Settings.of(props), ProviderEndpoints.simulatedOnly(null), List.of());
        gateway.views().loaded().get();
        KafkaProducer<String, String> producer = new KafkaProducer<>(
                Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()),
                new StringSerializer(), new StringSerializer());
        return new LiveTopicsGateway(broker, gateway, producer);
    }

    public Gateway gateway() {
        return gateway;
    }

    /** A new turn of the thread, whose records the test writes. */
    public TurnRecords newTurn(String threadId) {
        return new TurnRecords(producer, threadId);
    }

    /** A new turn of the thread for a tenant. */
    public TurnRecords newTurn(String threadId, String tenantId) {
        return new TurnRecords(producer, threadId, tenantId);
    }

    /**
     * Waits until the gateway's live feed has read everything written of the turn so far. It reads {@code llm.upserts}
     * and {@code llm.item-appends} with one consumer, in no set order between the two topics: a test that means a record
     * of one to be read before the next record of the other waits for this in between.
     */
    public void awaitLiveFeedRead(TurnRecords turn) {
        StreamPosition written = turn.written();
        await().until(() -> gateway.views().liveSeen(turn.id).equals(written));
    }

    @Override
    public void close() {
        producer.close();
        gateway.close();
        broker.close();
    }
}
