package io.turnstream.runtime;

import io.turnstream.cluster.ClusterLayout;
import io.turnstream.cluster.NodeProcess;
import io.turnstream.model.Topics;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.config.TopicConfig;
import org.awaitility.Awaitility;

/**
 * A real multi-node KRaft cluster for tests: each node a {@code turnstream broker --node-id N} process
 * (the {@code turnstream} CLI must be on the test classpath, as in turnstream-dist), so a node can
 * be SIGKILLed and restarted on its ports and data while the others serve. The contract's topics
 * have three replicas (fewer on a smaller cluster) and {@code min.insync.replicas} 2.
 */
public final class MultiNodeTestCluster implements AutoCloseable {

    private static final Duration READY = Duration.ofSeconds(240);

    private final Path dataDir;
    private final ClusterLayout layout;
    private final String classpath;
    private final List<NodeProcess> nodes;

    private MultiNodeTestCluster(Path dataDir, ClusterLayout layout, String classpath, List<NodeProcess> nodes) {
        this.dataDir = dataDir;
        this.layout = layout;
        this.classpath = classpath;
        this.nodes = nodes;
    }

    /** Starts {@code size} nodes and creates the contract's topics with {@code partitions} each. */
    public static MultiNodeTestCluster start(Path dataDir, int size, int partitions) throws Exception {
        ClusterLayout layout = ClusterLayout.loadOrCreate(dataDir, size);
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<NodeProcess> nodes = new ArrayList<>();
        MultiNodeTestCluster cluster = new MultiNodeTestCluster(dataDir, layout, classpath, nodes);
        try {
            for (ClusterLayout.Node node : layout.nodes()) {
                nodes.add(cluster.launch(node));
            }
            for (NodeProcess node : nodes) {
                node.awaitReady(READY);
            }
            cluster.awaitAllRegistered();
            short replicas = (short) Math.min(3, size);
            TopicAdmin.createAll(cluster.adminProperties(), Topics.DEFAULTS, partitions, replicas,
                    Map.of(TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG, Integer.toString(Math.min(2, replicas))));
        } catch (Exception e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }

    public String bootstrapServers() {
        return layout.bootstrapServers();
    }

    public int size() {
        return nodes.size();
    }

    /** SIGKILL of node {@code id} (1-based): no controlled shutdown, its leaderships move once it is fenced. */
    public synchronized void kill(int id) throws InterruptedException {
        nodes.get(id - 1).kill();
    }

    /** Starts node {@code id} again on its ports and data directory and waits until it serves clients. */
    public synchronized void restart(int id) throws IOException, InterruptedException {
        NodeProcess node = launch(layout.nodes().get(id - 1));
        nodes.set(id - 1, node);
        node.awaitReady(READY);
        awaitAllRegistered();
    }

    /**
     * Waits until every node is a live broker of the cluster: a node prints its ready line on its own,
     * and on a loaded machine another may still be starting or be fenced for a missed heartbeat, which
     * would fail a topic creation with three replicas.
     */
    private void awaitAllRegistered() {
        try (Admin admin = Admin.create(adminProperties())) {
            Awaitility.await("all " + nodes.size() + " brokers registered and unfenced").atMost(READY)
                    .pollInterval(Duration.ofMillis(200)).ignoreExceptionsInstanceOf(ExecutionException.class)
                    .until(() -> admin.describeCluster().nodes().get().size() == nodes.size());
        }
    }

    private NodeProcess launch(ClusterLayout.Node node) throws IOException {
        return NodeProcess.start(layout, node, dataDir, classpath, List.of("-Xmx384m", "-XX:+UseSerialGC"));
    }

    private Properties adminProperties() {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        return p;
    }

    @Override
    public synchronized void close() throws InterruptedException {
        NodeProcess.stopAll(nodes);
    }
}
