package io.turnstream.runtime;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.kafka.common.Uuid;

/**
 * Where one KRaft node stands in its cluster: its node id, the controller quorum's voters (every node
 * is broker and controller, so the voters are all the nodes) and the cluster id every node is
 * formatted with. Also the replication settings that follow from the cluster's size, so one node
 * and three nodes each get internal topics they can keep available.
 *
 * @param nodeId this node's id, one of the voters
 * @param voters every node: id, host and controller port
 * @param clusterId the id each node's data directory is formatted with (a Kafka base64 UUID)
 */
public record KraftQuorum(int nodeId, List<Voter> voters, String clusterId) {

    /** A node of the controller quorum. */
    public record Voter(int id, String host, int port) {
        @Override
        public String toString() {
            return id + "@" + host + ":" + port;
        }
    }

    public KraftQuorum {
        voters = List.copyOf(voters);
        if (voters.isEmpty()) {
            throw new IllegalArgumentException("a quorum needs at least one voter");
        }
        if (voters.stream().map(Voter::id).distinct().count() != voters.size()) {
            throw new IllegalArgumentException("voter ids must differ: " + votersString(voters));
        }
        if (voters.stream().noneMatch(v -> v.id() == nodeId)) {
            throw new IllegalArgumentException("node id " + nodeId + " is not one of the voters " + votersString(voters));
        }
        try {
            Uuid.fromString(clusterId);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("cluster id '" + clusterId
                    + "' is not a Kafka cluster id (22 characters of base64, as a new one: " + Uuid.randomUuid() + ")");
        }
    }

    /** A cluster of one: node 1, its controller on {@code controllerPort}, a fresh cluster id. */
    public static KraftQuorum single(String host, int controllerPort) {
        return new KraftQuorum(1, List.of(new Voter(1, host, controllerPort)), Uuid.randomUuid().toString());
    }

    /**
     * Parses {@code controller.quorum.voters} syntax: {@code 1@host:port,2@host:port,...}.
     *
     * @throws IllegalArgumentException with the part that is wrong
     */
    public static List<Voter> parseVoters(String text) {
        List<Voter> voters = new ArrayList<>();
        for (String part : text.split(",")) {
            String voter = part.strip();
            int at = voter.indexOf('@');
            int colon = voter.lastIndexOf(':');
            if (at < 1 || colon < at + 2 || colon == voter.length() - 1) {
                throw new IllegalArgumentException("'" + voter + "' is not ID@HOST:PORT");
            }
            try {
                voters.add(new Voter(Integer.parseInt(voter.substring(0, at)), voter.substring(at + 1, colon),
                        Integer.parseInt(voter.substring(colon + 1))));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("'" + voter + "' is not ID@HOST:PORT (id and port are numbers)");
            }
        }
        return voters;
    }

    public static String votersString(List<Voter> voters) {
        return voters.stream().map(Voter::toString).collect(Collectors.joining(","));
    }

    public Voter self() {
        return voters.stream().filter(v -> v.id() == nodeId).findFirst().orElseThrow();
    }

    /**
     * The quorum and the replication of internal topics (consumer offsets, transaction state, the
     * broker-side defaults Streams' internal topics use): three replicas where there are three nodes,
     * and a write needs two of them, so one node may fail without losing or stopping anything.
     */
    public Map<String, String> properties() {
        int replicas = Math.min(3, voters.size());
        String minIsr = Integer.toString(replicas >= 3 ? 2 : 1);
        Map<String, String> p = new HashMap<>();
        p.put("node.id", Integer.toString(nodeId));
        p.put("controller.quorum.voters", votersString(voters));
        p.put("offsets.topic.replication.factor", Integer.toString(replicas));
        p.put("transaction.state.log.replication.factor", Integer.toString(replicas));
        p.put("transaction.state.log.min.isr", minIsr);
        p.put("share.coordinator.state.topic.replication.factor", Integer.toString(replicas));
        p.put("share.coordinator.state.topic.min.isr", minIsr);
        p.put("default.replication.factor", Integer.toString(replicas));
        p.put("min.insync.replicas", minIsr);
        return p;
    }
}
