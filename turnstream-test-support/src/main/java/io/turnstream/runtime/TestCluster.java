package io.turnstream.runtime;

import java.nio.file.Path;
import java.util.Map;

/**
 * What an integration test class shares: one real broker with the contract's topics, a producer
 * writing raw events as the gateway does, and {@code llm.upserts} as a read_committed client sees it.
 */
public final class TestCluster implements AutoCloseable {

    private final ContractBroker broker;
    private final RawEventProducer gateway;
    private final UpsertLog upserts;

    private TestCluster(ContractBroker broker) {
        this.broker = broker;
        this.gateway = new RawEventProducer(broker.bootstrapServers());
        this.upserts = new UpsertLog(broker.bootstrapServers());
    }

    /**
     * @param dataDir the broker's data directory
     * @param partitions of every contract topic
     * @param brokerOverrides broker properties over the embedded defaults
     */
    public static TestCluster start(Path dataDir, int partitions, Map<String, String> brokerOverrides) throws Exception {
        return new TestCluster(ContractBroker.withTopics(new EmbeddedKafkaBroker(0, dataDir, brokerOverrides).start(),
                partitions));
    }

    public EmbeddedKafkaBroker broker() {
        return broker.broker();
    }

    public String bootstrapServers() {
        return broker.bootstrapServers();
    }

    public RawEventProducer gateway() {
        return gateway;
    }

    public UpsertLog upserts() {
        return upserts;
    }

    @Override
    public void close() {
        upserts.close();
        gateway.close();
        broker.close();
    }
}
