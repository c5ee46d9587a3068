package io.turnstream.runtime;

import io.turnstream.model.Topics;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.AdminClientConfig;

/**
 * One real broker with the contract's topics, and the client properties that reach it: what a test class of Kafka
 * clients shares. {@link TestCluster} adds a raw-event producer and an upserts reader to it.
 */
public final class ContractBroker implements AutoCloseable {

    private final EmbeddedKafkaBroker broker;

    private ContractBroker(EmbeddedKafkaBroker broker) {
        this.broker = broker;
    }

    /** A broker on a free port with every contract topic of {@code partitions} partitions. */
    public static ContractBroker start(int partitions) throws InterruptedException, ExecutionException {
        return withTopics(EmbeddedKafkaBroker.onFreePort().start(), partitions);
    }

    /** Creates every contract topic with {@code partitions} partitions on a started broker, closing it if that fails. */
    static ContractBroker withTopics(EmbeddedKafkaBroker broker, int partitions)
            throws InterruptedException, ExecutionException {
        ContractBroker started = new ContractBroker(broker);
        try {
            TopicAdmin.createAll(started.clientProperties(), Topics.DEFAULTS, partitions, (short) 1);
        } catch (InterruptedException | ExecutionException | RuntimeException e) {
            broker.close();
            throw e;
        }
        return started;
    }

    public EmbeddedKafkaBroker broker() {
        return broker;
    }

    public String bootstrapServers() {
        return broker.bootstrapServers();
    }

    /** A new copy of the properties a client needs to reach the broker, to add to. */
    public Properties clientProperties() {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        return props;
    }

    @Override
    public void close() {
        broker.close();
    }
}
