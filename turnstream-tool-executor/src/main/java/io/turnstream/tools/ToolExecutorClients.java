package io.turnstream.tools;

import io.turnstream.runtime.FailoverDefaults;
import io.turnstream.runtime.Settings;
import java.util.Properties;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.producer.ProducerConfig;

/** The Kafka client settings of one tool executor instance: each client with its own id, so metrics and broker logs stay apart. */
final class ToolExecutorClients {

    private final Settings settings;
    private final ToolExecutorConfig config;

    ToolExecutorClients(Settings settings, ToolExecutorConfig config) {
        this.settings = settings;
        this.config = config;
    }

    /** The transactional producer of results, ledger marks, notices and dead letters: one transactional id per instance. */
    Properties producer() {
        Properties props = settings.kafkaProperties();
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, config.groupId() + "-" + config.instanceId());
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(CommonClientConfigs.CLIENT_ID_CONFIG, "turnstream-tool-executor-" + config.instanceId());
        // the instance that takes a dead one's partitions has another transactional id and cannot fence
        // its open transaction, which holds back the group's committed offsets (and so the takeover)
        // until the broker aborts it: 5 s, not the producer's default 60 s
        FailoverDefaults.transactionalProducer(props);
        return props;
    }

    /** The group member reading tool calls, a static member with the instance id. */
    Properties callsConsumer() {
        Properties props = settings.kafkaProperties();
        props.put(ConsumerConfig.GROUP_ID_CONFIG, config.groupId());
        props.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, config.instanceId());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.putIfAbsent(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.putIfAbsent(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, Integer.toString(Math.min(500, config.maxInFlight())));
        if ("classic".equalsIgnoreCase(props.getProperty(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic"))) {
            // revoke only the partitions that move, so a rebalance does not stop every running call
            props.putIfAbsent(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName());
        }
        // a dead executor's calls move after 6 s instead of 45 s
        FailoverDefaults.groupMember(props);
        // its own client id: the producer's metrics (and the broker's logs) stay apart from the consumer's
        props.put(CommonClientConfigs.CLIENT_ID_CONFIG, "turnstream-tool-executor-" + config.instanceId() + "-calls");
        return props;
    }

    /** For {@link ControlEnds}: no group, read_uncommitted, so an end offset is the high watermark. */
    Properties controlEnds() {
        Properties props = plainConsumer("control-ends");
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
        return props;
    }

    /** For the ledger reader and the cancel listener: assigned partitions, no group. */
    Properties plainConsumer(String role) {
        Properties props = settings.kafkaProperties();
        props.remove(ConsumerConfig.GROUP_ID_CONFIG);
        props.remove(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(CommonClientConfigs.CLIENT_ID_CONFIG, "turnstream-tool-executor-" + config.instanceId() + "-" + role);
        return props;
    }
}
