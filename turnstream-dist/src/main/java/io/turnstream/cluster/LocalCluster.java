package io.turnstream.cluster;

import io.turnstream.model.Topics;
import io.turnstream.runtime.TopicAdmin;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.config.TopicConfig;

/**
 * A real multi-node KRaft cluster on this machine for the fault runs: each node a
 * {@code turnstream broker --node-id N} process ({@link NodeProcess}), so a node can be SIGKILLed and
 * restarted on its ports and data while the others serve. The contract's topics get three replicas
 * (fewer on a smaller cluster) and {@code min.insync.replicas} 2.
 */
public final class LocalCluster implements AutoCloseable {

    private static final Duration READY = Duration.ofSeconds(240);
    /**
     * The services' flags ({@link ServiceProcess}), C1 only among them: a fault run's nodes are fresh, and with
     * C2 their compiler threads took a quarter of the brokers' CPU through the run on two cores
     * (docs/benchmarks.md, "Where the brokers' CPU goes in a fault run").
     */
    private static final List<String> NODE_JVM = List.of("-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            ServiceProcess.LOG_CONFIG);

    private final Path dataDir;
    private final ClusterLayout layout;
    private final String classpath;
    private final List<NodeProcess> nodes = new ArrayList<>();

    private LocalCluster(Path dataDir, ClusterLayout layout, String classpath) {
        this.dataDir = dataDir;
        this.layout = layout;
        this.classpath = classpath;
    }

    /**
     * Starts {@code size} nodes and creates the contract's topics with {@code partitions} each.
     *
     * @param classpath holds the {@code turnstream} CLI
     */
    public static LocalCluster start(Path dataDir, int size, int partitions, String classpath) throws Exception {
        LocalCluster cluster = new LocalCluster(dataDir, ClusterLayout.loadOrCreate(dataDir, size), classpath);
        try {
            for (ClusterLayout.Node node : cluster.layout.nodes()) {
                cluster.nodes.add(cluster.launch(node));
            }
            for (NodeProcess node : cluster.nodes) {
                node.awaitReady(READY);
            }
            cluster.awaitAllRegistered();
            cluster.createTopics(Topics.DEFAULTS, partitions);
        } catch (Exception e) {
            cluster.close();
            throw e;
        }
        return cluster;
    }

    /** The contract's topics under these names, replicated as the cluster allows. */
    public void createTopics(Topics topics, int partitions) throws ExecutionException, InterruptedException {
        short replicas = replicas();
        TopicAdmin.createAll(adminProperties(), topics, partitions, replicas,
                Map.of(TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG, Integer.toString(Math.min(2, replicas))));
    }

    public short replicas() {
        return (short) Math.min(3, nodes.size());
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
    public synchronized void restart(int id) throws Exception {
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
    private void awaitAllRegistered() throws Exception {
        try (Admin admin = Admin.create(adminProperties())) {
            Waits.until("all " + nodes.size() + " brokers registered and unfenced", READY, Duration.ofMillis(200), () -> {
                try {
                    return admin.describeCluster().nodes().get().size();
                } catch (ExecutionException notYet) {
                    return 0;
                }
            }, registered -> registered == nodes.size());
        }
    }

    /**
     * Copies the nodes' output ({@code node-N.log}, {@code node-N.out}) from a cluster's data directory to
     * {@code to}: a run's cluster lives in a directory that is deleted, its logs are wanted after a failure.
     */
    public static void copyLogs(Path dataDir, Path to) throws IOException {
        if (!Files.isDirectory(dataDir)) {
            return;
        }
        Files.createDirectories(to);
        try (DirectoryStream<Path> logs = Files.newDirectoryStream(dataDir, "node-*.{log,out}")) {
            for (Path log : logs) {
                Files.copy(log, to.resolve(log.getFileName()), StandardCopyOption.REPLACE_EXISTING);
            }
        }
    }

    private NodeProcess launch(ClusterLayout.Node node) throws IOException {
        return NodeProcess.start(layout, node, dataDir, classpath, NODE_JVM);
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
