package io.turnstream.tools;

import io.turnstream.model.Topics;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicExistsException;

/**
 * The executor's topics: the contract's must exist already; its own ledger (compacted, one partition per
 * tool-calls partition) and dead-letter topic are created when missing, as Kafka Streams creates its
 * internal topics.
 */
final class ExecutorTopics {

    private static final long TIMEOUT_SECONDS = 60;

    private ExecutorTopics() {
    }

    static void ensure(Properties clientProps, Topics topics, ToolExecutorConfig config) {
        try (Admin admin = Admin.create(clientProps)) {
            Set<String> existing = admin.listTopics().names().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
            List<String> missing = List.of(topics.toolCalls(), topics.toolResults(), topics.control(), topics.toolDefinitions()).stream()
                    .filter(name -> !existing.contains(name)).toList();
            if (!missing.isEmpty()) {
                throw new IllegalStateException("topics " + missing + " do not exist; create the contract's topics first "
                        + "(turnstream topics)");
            }
            int partitions = partitionCount(admin, topics.toolCalls());
            if (existing.contains(config.ledgerTopic())) {
                int ledgerPartitions = partitionCount(admin, config.ledgerTopic());
                if (ledgerPartitions < partitions) {
                    throw new IllegalStateException("the ledger topic " + config.ledgerTopic() + " has " + ledgerPartitions
                            + " partitions but " + topics.toolCalls() + " has " + partitions + "; add partitions to the ledger");
                }
            } else {
                create(admin, new NewTopic(config.ledgerTopic(), Optional.of(partitions), Optional.empty()).configs(Map.of(
                        TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT + "," + TopicConfig.CLEANUP_POLICY_DELETE,
                        TopicConfig.RETENTION_MS_CONFIG, Long.toString(config.ledgerRetention().toMillis()))));
            }
            if (!existing.contains(config.deadLetterTopic())) {
                create(admin, new NewTopic(config.deadLetterTopic(), Optional.of(partitions), Optional.empty()));
            }
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("cannot check the executor's topics: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while checking the executor's topics", e);
        }
    }

    private static int partitionCount(Admin admin, String topic) throws ExecutionException, InterruptedException, TimeoutException {
        return admin.describeTopics(List.of(topic)).allTopicNames().get(TIMEOUT_SECONDS, TimeUnit.SECONDS)
                .get(topic).partitions().size();
    }

    private static void create(Admin admin, NewTopic topic) throws ExecutionException, InterruptedException, TimeoutException {
        try {
            admin.createTopics(List.of(topic)).all().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw e;
            }
        }
    }
}
