package io.turnstream.cli;

import io.turnstream.cluster.ClusterLayout;
import io.turnstream.cluster.NodeProcess;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code turnstream cluster}: a local multi-node KRaft cluster, one {@code turnstream broker} process per node. */
@Command(name = "cluster", mixinStandardHelpOptions = true,
        description = {"Runs a local multi-node Kafka cluster, one broker process per node.",
            "Each node is `turnstream broker --node-id N --voters ... --cluster-id ...` on",
            "127.0.0.1 (broker and controller in one). Prints bootstrap.servers=... and a",
            "`node N pid P` line per node when all serve clients; runs until SIGTERM or",
            "Ctrl-C, then stops every node. Ports and cluster id are kept in",
            "DIR/cluster.properties, so the same --data-dir brings the same cluster back.",
            "Each node's output is in DIR/node-N.log."})
public final class ClusterCommand implements Callable<Integer> {

    private static final Logger LOG = LoggerFactory.getLogger(ClusterCommand.class);

    @Spec
    private CommandSpec spec;

    @Option(names = "--nodes", paramLabel = "N", defaultValue = "3",
            description = "Number of nodes (default: ${DEFAULT-VALUE}; three tolerate one failed node).")
    private int nodes;

    @Option(names = "--data-dir", paramLabel = "DIR", required = true,
            description = "Where the nodes keep their data (DIR/node-N), kept across restarts.")
    private Path dataDir;

    @Option(names = "--node-heap", paramLabel = "SIZE", defaultValue = "512m",
            description = "Maximum heap of each node's JVM (default: ${DEFAULT-VALUE}).")
    private String nodeHeap;

    /** Set once the nodes are being stopped on purpose: their exits are no news then. */
    private volatile boolean stopping;

    @Override
    public Integer call() throws Exception {
        if (nodes < 1) {
            throw new CliFailure(ExitCodes.USAGE, "--nodes must be at least 1");
        }
        ClusterLayout layout;
        try {
            layout = ClusterLayout.loadOrCreate(Files.createDirectories(dataDir), nodes);
        } catch (IllegalArgumentException | IOException e) {
            throw new CliFailure(ExitCodes.USAGE, e.getMessage(), e);
        }
        List<NodeProcess> running = new ArrayList<>();
        AutoCloseable stopAll = () -> {
            stopping = true;
            NodeProcess.stopAll(running);
        };
        try {
            for (ClusterLayout.Node node : layout.nodes()) {
                running.add(NodeProcess.start(layout, node, dataDir, System.getProperty("java.class.path"),
                        List.of("-Xmx" + nodeHeap)));
            }
            for (NodeProcess node : running) {
                node.awaitReady(Duration.ofSeconds(240));
            }
        } catch (IOException | IllegalStateException e) {
            stopAll.close();
            throw new CliFailure(ExitCodes.FAILURE, "cannot start the cluster in " + dataDir + ": " + e.getMessage(), e);
        }
        PrintWriter out = spec.commandLine().getOut();
        out.println("bootstrap.servers=" + layout.bootstrapServers());
        for (NodeProcess node : running) {
            out.println("node " + node.node().id() + " pid " + node.pid());
        }
        out.flush();
        LOG.info("cluster {} of {} nodes; data and node logs in {}", layout.clusterId(), nodes, dataDir);
        // a node that exits by itself is reported, not a reason to stop the others: three nodes run on with
        // one failed, and `turnstream broker` with that node's arguments brings it back
        CompletableFuture<Throwable> failure = new CompletableFuture<>();
        for (NodeProcess node : running) {
            node.onExit().thenAccept(process -> {
                if (stopping) {
                    return;
                }
                LOG.warn("node {} exited with {}; see {}", node.node().id(), process.exitValue(),
                        dataDir.resolve("node-" + node.node().id() + ".log"));
                if (running.stream().noneMatch(NodeProcess::isAlive)) {
                    failure.complete(new IllegalStateException("every node exited; see the node logs in " + dataDir));
                }
            });
        }
        UntilStopped.run("cluster", stopAll, failure);
        return ExitCodes.OK;
    }
}
