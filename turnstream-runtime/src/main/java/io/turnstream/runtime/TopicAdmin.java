package io.turnstream.runtime;

import io.turnstream.model.Topics;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicExistsException;

/** Creates the contract's topics idempotently, with the cleanup policy each one needs. */
public final class TopicAdmin {

    private TopicAdmin() {
    }

    /**
     * Creates every topic of {@code topics} that does not exist yet.
     *
     * @param clientProps admin client properties (bootstrap servers, security)
     * @return the names of the topics this call created
     */
    public static List<String> createAll(Properties clientProps, Topics topics, int partitions, short replicationFactor)
            throws InterruptedException, ExecutionException {
        return createAll(clientProps, topics, partitions, replicationFactor, Map.of());
    }

    /**
     * Creates every topic of {@code topics} that does not exist yet, each with {@code topicConfigs}
     * (such as {@code min.insync.replicas}) besides its cleanup policy.
     *
     * @return the names of the topics this call created
     */
    public static List<String> createAll(Properties clientProps, Topics topics, int partitions, short replicationFactor,
                                         Map<String, String> topicConfigs) throws InterruptedException, ExecutionException {
        List<NewTopic> wanted = new ArrayList<>();
        for (String name : topics.byRole().values()) {
            Map<String, String> configs = new HashMap<>(topicConfigs);
            if (topics.compacted(name)) {
                configs.put(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT);
            }
            wanted.add(new NewTopic(name, partitions, replicationFactor).configs(configs));
        }
        List<String> created = new ArrayList<>();
        try (Admin admin = Admin.create(clientProps)) {
            Set<String> existing = admin.listTopics().names().get();
            List<NewTopic> missing = wanted.stream().filter(t -> !existing.contains(t.name())).toList();
            var results = admin.createTopics(missing).values();
            for (var entry : results.entrySet()) {
                try {
                    entry.getValue().get();
                    created.add(entry.getKey());
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof TopicExistsException)) {
                        throw e;
                    }
                }
            }
        }
        return created;
    }
}
