package io.turnstream.cli;

import io.turnstream.model.Topics;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.TopicAdmin;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.RetriableException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code turnstream topics}: creates the contract's topics, idempotently, and shows what is there. */
@Command(name = "topics", mixinStandardHelpOptions = true,
        description = {"Creates the contract's topics (idempotent).",
            "Creates every topic that does not exist yet (llm.item-state compacted), then",
            "prints each topic as created or existing, with partitions and cleanup policy.",
            "Topic names follow turnstream.topic.<role> in --config."})
public final class TopicsCommand implements Callable<Integer> {

    /** How long a new topic may take to be known to the broker asked to describe it. */
    private static final Duration METADATA_WAIT = Duration.ofSeconds(30);
    private static final Duration METADATA_RETRY_BACKOFF = Duration.ofMillis(200);

    @Spec
    private CommandSpec spec;

    @Mixin
    private KafkaOptions kafka;

    @Option(names = "--partitions", paramLabel = "N", defaultValue = "3",
            description = "Partitions of each new topic (default: ${DEFAULT-VALUE}); turns spread over them.")
    private int partitions;

    @Option(names = "--replication-factor", paramLabel = "N", defaultValue = "-1",
            description = "Replicas of each new topic (default: the cluster's default.replication.factor).")
    private short replicationFactor;

    @Option(names = "--min-insync-replicas", paramLabel = "N",
            description = "Replicas that must have a write before it is acknowledged to acks=all producers "
                    + "(every Turnstream producer); e.g. 2 with --replication-factor 3, so one broker may fail "
                    + "(default: the cluster's min.insync.replicas).")
    private Integer minInsyncReplicas;

    @Override
    public Integer call() throws InterruptedException {
        if (partitions < 1) {
            throw new ParameterException(spec.commandLine(), "--partitions must be at least 1");
        }
        if (replicationFactor == 0 || replicationFactor < -1) {
            throw new ParameterException(spec.commandLine(), "--replication-factor must be at least 1");
        }
        if (minInsyncReplicas != null && (minInsyncReplicas < 1
                || (replicationFactor > 0 && minInsyncReplicas > replicationFactor))) {
            throw new ParameterException(spec.commandLine(), "--min-insync-replicas must be at least 1 and at most "
                    + "--replication-factor: a write could never be acknowledged");
        }
        Map<String, String> topicConfigs = minInsyncReplicas == null ? Map.of()
                : Map.of(TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG, minInsyncReplicas.toString());
        Settings settings = kafka.connect(List.of());
        Topics topics = settings.topics();
        Properties admin = ClusterCheck.adminProperties(settings);
        List<String> created;
        try {
            created = TopicAdmin.createAll(admin, topics, partitions, replicationFactor, topicConfigs);
        } catch (ExecutionException e) {
            throw new CliFailure(ExitCodes.FAILURE, "cannot create topics on " + settings.bootstrapServers() + ": "
                    + e.getCause().getMessage(), e.getCause());
        }
        report(admin, topics, created);
        return ExitCodes.OK;
    }

    private void report(Properties adminProps, Topics topics, List<String> created) throws InterruptedException {
        List<String> names = topics.byRole().values().stream().sorted().toList();
        PrintWriter out = spec.commandLine().getOut();
        List<ConfigResource> resources = names.stream()
                .map(name -> new ConfigResource(ConfigResource.Type.TOPIC, name)).toList();
        try (Admin admin = Admin.create(adminProps)) {
            Map<String, TopicDescription> descriptions = onceKnown(() -> admin.describeTopics(names).allTopicNames().get());
            Map<ConfigResource, Config> configs = onceKnown(() -> admin.describeConfigs(resources).all().get());
            for (ConfigResource resource : resources) {
                String name = resource.name();
                TopicDescription description = descriptions.get(name);
                String cleanup = configs.get(resource).get(TopicConfig.CLEANUP_POLICY_CONFIG).value();
                out.printf("%-8s %-24s partitions=%d replicas=%d min.insync.replicas=%s cleanup.policy=%s%n",
                        created.contains(name) ? "created" : "exists", name, description.partitions().size(),
                        description.partitions().get(0).replicas().size(),
                        configs.get(resource).get(TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG).value(), cleanup);
                if (name.equals(topics.itemState()) && !cleanup.contains(TopicConfig.CLEANUP_POLICY_COMPACT)) {
                    spec.commandLine().getErr().println("turnstream topics: warning: " + name
                            + " is not compacted; it keeps every upsert instead of the latest per item");
                }
            }
        } catch (ExecutionException e) {
            throw new CliFailure(ExitCodes.FAILURE, "created " + created + " but cannot describe the topics: "
                    + e.getCause().getMessage(), e.getCause());
        }
        out.flush();
    }

    private interface Describe<T> {
        T get() throws InterruptedException, ExecutionException;
    }

    /**
     * A topic just created is not known to every broker at once: the one asked may answer "This server does not host
     * this topic-partition" until the controller's metadata reaches it (seen on a three-node cluster right after the
     * create). Such retriable answers are asked again for up to {@link #METADATA_WAIT}.
     */
    private static <T> T onceKnown(Describe<T> describe) throws InterruptedException, ExecutionException {
        long deadline = System.nanoTime() + METADATA_WAIT.toNanos();
        while (true) {
            try {
                return describe.get();
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof RetriableException) || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(METADATA_RETRY_BACKOFF.toMillis());
            }
        }
    }
}
