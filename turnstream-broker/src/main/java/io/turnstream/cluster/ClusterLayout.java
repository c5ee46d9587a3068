package io.turnstream.cluster;

import io.turnstream.runtime.FreePorts;
import io.turnstream.runtime.KraftQuorum;
import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.stream.Collectors;
import org.apache.kafka.common.Uuid;

/**
 * The ports and cluster id of a local multi-node cluster, kept in {@code cluster.properties} of its
 * data directory: a cluster started again on the same directory comes back with the same nodes,
 * which their formatted data directories require.
 *
 * @param clusterId the id every node is formatted with
 * @param nodes node 1, 2, ... with their client and controller ports
 */
public record ClusterLayout(String clusterId, List<Node> nodes) {

    private static final String HOST = "127.0.0.1";
    private static final String FILE = "cluster.properties";

    /** A node: id, client port, controller port. */
    public record Node(int id, int port, int controllerPort) {
        public String bootstrapServer() {
            return HOST + ":" + port;
        }
    }

    /** The layout stored in {@code dataDir}, or a new one on free ports, stored there. */
    public static ClusterLayout loadOrCreate(Path dataDir, int nodeCount) throws IOException {
        Path file = dataDir.resolve(FILE);
        if (Files.exists(file)) {
            ClusterLayout stored = load(file);
            if (stored.nodes.size() != nodeCount) {
                throw new IllegalArgumentException(dataDir + " holds a cluster of " + stored.nodes.size()
                        + " nodes, not " + nodeCount + ": use another --data-dir or --nodes " + stored.nodes.size());
            }
            return stored;
        }
        List<Integer> ports = FreePorts.take(2 * nodeCount);
        List<Node> nodes = new ArrayList<>();
        for (int i = 0; i < nodeCount; i++) {
            nodes.add(new Node(i + 1, ports.get(2 * i), ports.get(2 * i + 1)));
        }
        ClusterLayout layout = new ClusterLayout(Uuid.randomUuid().toString(), nodes);
        Files.createDirectories(dataDir);
        layout.store(file);
        return layout;
    }

    public String bootstrapServers() {
        return nodes.stream().map(Node::bootstrapServer).collect(Collectors.joining(","));
    }

    /** {@code --voters} of every node: all of them, at their controller ports. */
    public String voters() {
        return KraftQuorum.votersString(nodes.stream()
                .map(n -> new KraftQuorum.Voter(n.id(), HOST, n.controllerPort())).toList());
    }

    /** The {@code turnstream broker} arguments of {@code node}, its data in {@code dataDir}/node-N. */
    public List<String> brokerArguments(Node node, Path dataDir) {
        return List.of("broker", "--node-id", Integer.toString(node.id()), "--voters", voters(),
                "--cluster-id", clusterId, "--port", Integer.toString(node.port()),
                "--data-dir", nodeDir(node, dataDir).toString());
    }

    public static Path nodeDir(Node node, Path dataDir) {
        return dataDir.resolve("node-" + node.id());
    }

    private static ClusterLayout load(Path file) throws IOException {
        Properties p = new Properties();
        try (Reader in = Files.newBufferedReader(file)) {
            p.load(in);
        }
        try {
            int count = Integer.parseInt(p.getProperty("nodes"));
            List<Node> nodes = new ArrayList<>();
            for (int id = 1; id <= count; id++) {
                nodes.add(new Node(id, Integer.parseInt(p.getProperty("node." + id + ".port")),
                        Integer.parseInt(p.getProperty("node." + id + ".controller.port"))));
            }
            return new ClusterLayout(p.getProperty("cluster.id"), nodes);
        } catch (NumberFormatException e) {
            throw new IOException(file + " is damaged (" + e.getMessage() + "): remove it with the node directories", e);
        }
    }

    private void store(Path file) throws IOException {
        Properties p = new Properties();
        p.setProperty("cluster.id", clusterId);
        p.setProperty("nodes", Integer.toString(nodes.size()));
        for (Node node : nodes) {
            p.setProperty("node." + node.id() + ".port", Integer.toString(node.port()));
            p.setProperty("node." + node.id() + ".controller.port", Integer.toString(node.controllerPort()));
        }
        try (Writer out = Files.newBufferedWriter(file)) {
            p.store(out, "turnstream cluster: the nodes' ports and cluster id, kept so a restart finds the same cluster");
        }
    }
}
