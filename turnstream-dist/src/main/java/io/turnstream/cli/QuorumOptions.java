package io.turnstream.cli;

import io.turnstream.runtime.KraftQuorum;
import java.util.Optional;
import picocli.CommandLine.Option;

/**
 * {@code turnstream broker}'s options for joining a multi-node cluster: given together, or not at all
 * (a cluster of one). Each node runs broker and controller; the voters are all the nodes.
 */
final class QuorumOptions {

    @Option(names = "--node-id", paramLabel = "N",
            description = "This node's id, one of the --voters (with --voters and --cluster-id).")
    private Integer nodeId;

    @Option(names = "--voters", paramLabel = "ID@HOST:PORT[,...]",
            description = "Every node of the cluster with its controller port, e.g. "
                    + "1@127.0.0.1:9093,2@127.0.0.1:9095,3@127.0.0.1:9097.")
    private String voters;

    @Option(names = "--cluster-id", paramLabel = "ID",
            description = "The cluster id every node is formatted with (22 characters of base64; "
                    + "turnstream cluster makes one).")
    private String clusterId;

    /** The quorum to join, empty for a cluster of one; fails with the missing or wrong option. */
    Optional<KraftQuorum> quorum() {
        if (nodeId == null && voters == null && clusterId == null) {
            return Optional.empty();
        }
        if (nodeId == null || voters == null || clusterId == null) {
            throw new CliFailure(ExitCodes.USAGE, "--node-id, --voters and --cluster-id go together: a node of a "
                    + "cluster needs all three");
        }
        try {
            return Optional.of(new KraftQuorum(nodeId, KraftQuorum.parseVoters(voters), clusterId));
        } catch (IllegalArgumentException e) {
            throw new CliFailure(ExitCodes.USAGE, "--voters/--node-id/--cluster-id: " + e.getMessage());
        }
    }
}
