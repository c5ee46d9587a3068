package io.turnstream.bench;

import io.turnstream.gateway.GatewayConfig;
import io.turnstream.model.Topics;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.StreamsService;
import io.turnstream.tools.ToolExecutorConfig;
import io.turnstream.topology.TopologyConfig;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.CommonClientConfigs;

/**
 * What {@code turnstream bench --config FILE} hands on to the applications the bench starts: every key of the file,
 * Kafka's and Turnstream's own ({@code turnstream.}), as their own {@code --config} would take them. A key the bench
 * would not honour is refused, by name, before anything starts, instead of being dropped: one the bench sets itself
 * for each application (the brokers, application ids, state directories, topics, growth rule, ports, workspace), and,
 * without {@code --cluster}, a Turnstream key that neither the topology nor the pass-through app reads, the only
 * applications that bench starts (with {@code --cluster} every service of the fault runs reads the file).
 */
public final class BenchProperties {

    private static final String OWN_PREFIX = "turnstream.";
    /** Keys the bench sets for each application it starts, whatever the file says. */
    private static final Set<String> SET_BY_THE_BENCH = Set.of(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG,
            TopologyConfig.APPLICATION_ID, TopologyConfig.STATE_DIR, TopologyConfig.MIN_GROWTH_FRACTION,
            ToolExecutorConfig.WORKSPACE, ToolExecutorConfig.PREFIX + "instance-id", GatewayConfig.PREFIX + "port",
            GatewayConfig.MANAGEMENT_PORT);
    /** Turnstream's keys that the topology and the pass-through app read in the in-process bench. */
    private static final Set<String> TOPOLOGY = Set.of(TopologyConfig.GRADIENT, TopologyConfig.BATCH_TIMEOUT_MS,
            TopologyConfig.IDLE_TIMEOUT_MS, TopologyConfig.PUNCTUATE_INTERVAL_MS, TopologyConfig.CLOSED_TURN_RETENTION_MS,
            TopologyConfig.ITEM_STATE_RETENTION_MS, TopologyConfig.COMMIT_INTERVAL_MS,
            TopologyConfig.COMMIT_BEHIND_INTERVAL_MS, TopologyConfig.COMMIT_BEHIND_AFTER_MS,
            StreamsService.MAX_THREAD_REPLACEMENTS, StreamsService.THREAD_REPLACEMENT_WINDOW_MS,
            StreamsService.CLOSE_TIMEOUT_MS);

    private BenchProperties() {
    }

    /**
     * @param cluster whether the bench runs {@code --cluster} (the services of the fault runs read every key)
     * @throws IllegalArgumentException naming the keys the bench would not honour
     */
    public static Properties from(Settings file, boolean cluster) {
        Properties all = file.all();
        List<String> names = all.stringPropertyNames().stream().sorted().toList();
        List<String> setByTheBench = names.stream()
                .filter(name -> SET_BY_THE_BENCH.contains(name) || name.startsWith(Topics.PREFIX)).toList();
        if (!setByTheBench.isEmpty()) {
            throw new IllegalArgumentException(String.join(", ", setByTheBench) + (setByTheBench.size() == 1 ? " is" : " are")
                    + " set by the bench for each application it starts and cannot come from --config"
                    + (setByTheBench.contains(TopologyConfig.MIN_GROWTH_FRACTION)
                            ? " (the growth rule measured beside the seed gradient is --growth-fraction)" : ""));
        }
        List<String> unread = cluster ? List.of() : names.stream()
                .filter(name -> name.startsWith(OWN_PREFIX) && !TOPOLOGY.contains(name)).toList();
        if (!unread.isEmpty()) {
            throw new IllegalArgumentException(String.join(", ", unread) + (unread.size() == 1 ? " is" : " are")
                    + " read by neither the topology nor the pass-through app, the only applications bench starts "
                    + "without --cluster; of Turnstream's keys they read " + String.join(", ", TOPOLOGY.stream().sorted()
                    .toList()) + " (with --cluster every key goes to every service of the fault runs)");
        }
        return all;
    }
}
