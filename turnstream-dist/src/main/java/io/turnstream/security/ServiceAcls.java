package io.turnstream.security;

import io.turnstream.model.Topics;
import io.turnstream.runtime.BrokerSecurity;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.TenantClaims;
import io.turnstream.tools.ToolExecutorConfig;
import io.turnstream.topology.TopologyConfig;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

/**
 * The least-privilege ACLs of each service's Kafka principal, from the same settings the services run
 * with (topic names, group ids, the topology's application id). Each service may read what it consumes,
 * write what the contract says it writes, use its own consumer group and transactional ids, and nothing
 * else: the gateway cannot write {@code llm.tool-calls}, the tool executor cannot write
 * {@code llm.raw-events}, no service but the topology reads {@code llm.raw-events.dlq}, and so on.
 * The admin principal is the cluster's super user and needs none.
 */
public final class ServiceAcls {

    /** A service that talks to Kafka, with its default principal name ({@code User:<name>}). */
    public enum Service {
        GATEWAY("gateway"), TOPOLOGY("topology"), TOOL_EXECUTOR("tool-executor"), CONNECT("connect");

        private final String principalName;

        Service(String principalName) {
            this.principalName = principalName;
        }

        public String principalName() {
            return principalName;
        }

        public static Service named(String name) {
            for (Service service : values()) {
                if (service.principalName.equals(name)) {
                    return service;
                }
            }
            throw new IllegalArgumentException("no service '" + name + "' (one of gateway, topology, tool-executor, connect)");
        }
    }

    /** The gateways' consumer group (turnstream.gateway.group-id); its transactional ids are {@code <group>-turns-<partition>}. */
    static final String GATEWAY_GROUP_KEY = "turnstream.gateway.group-id";
    static final String GATEWAY_GROUP_DEFAULT = "turnstream-gateway";
    /** The Postgres sink's connector name (connectors/postgres-item-state-sink.properties): its group is {@code connect-<name>}. */
    static final String CONNECTOR_NAME = "turnstream-item-state-postgres";

    private final Map<Service, List<AclBinding>> bindings;

    private ServiceAcls(Map<Service, List<AclBinding>> bindings) {
        this.bindings = bindings;
    }

    /** The ACLs for principals named after the services ({@code User:gateway}, ...). */
    public static ServiceAcls of(Settings settings) {
        return of(settings, Map.of());
    }

    /**
     * @param principals a principal per service where it is not {@code User:<service name>}, e.g.
     *                   {@code GATEWAY -> User:svc-gateway}
     */
    public static ServiceAcls of(Settings settings, Map<Service, String> principals) {
        Topics topics = settings.topics();
        Map<Service, List<AclBinding>> all = new LinkedHashMap<>();

        String gatewayGroup = settings.get(GATEWAY_GROUP_KEY, GATEWAY_GROUP_DEFAULT);
        all.put(Service.GATEWAY, new Grants(principal(Service.GATEWAY, principals))
                .read(topics.turnRequests(), topics.rawEvents(), topics.upserts(), topics.itemAppends(), topics.itemState(),
                        topics.control(), topics.toolResults(), topics.toolDefinitions(), topics.threadAllowances())
                .write(topics.rawEvents(), topics.turnRequests(), topics.control(), topics.threadAllowances(),
                        topics.deadLetters())
                .group(gatewayGroup)
                .brokerConfigs()
                .transactionalIdPrefix(gatewayGroup + "-turns-")
                .list());

        String applicationId = settings.get(TopologyConfig.APPLICATION_ID, TopologyConfig.DEFAULT_APPLICATION_ID);
        all.put(Service.TOPOLOGY, new Grants(principal(Service.TOPOLOGY, principals))
                .read(topics.rawEvents())
                .write(topics.upserts(), topics.itemState(), topics.itemAppends(), topics.toolCalls(), topics.deadLetters())
                // Kafka Streams' changelog and repartition topics, which it creates and cleans up itself
                .grant(ResourceType.TOPIC, applicationId + "-", PatternType.PREFIXED, AclOperation.ALL)
                .group(applicationId)
                .brokerConfigs()
                // exactly-once v2: <application id>-<process id>-<thread>
                .transactionalIdPrefix(applicationId + "-")
                .list());

        String executorGroup = ToolExecutorConfig.groupId(settings);
        String ledger = ToolExecutorConfig.ledgerTopic(settings);
        String callDeadLetters = ToolExecutorConfig.deadLetterTopic(settings);
        all.put(Service.TOOL_EXECUTOR, new Grants(principal(Service.TOOL_EXECUTOR, principals))
                .read(topics.toolCalls(), topics.control(), topics.toolDefinitions(), ledger)
                .write(topics.toolResults(), topics.control(), topics.toolDefinitions(), ledger, callDeadLetters)
                .create(ledger, callDeadLetters)
                .group(executorGroup)
                .brokerConfigs()
                .transactionalIdPrefix(executorGroup + "-")
                .list());

        String sinkDeadLetters = topics.itemState() + ".dlq";
        all.put(Service.CONNECT, new Grants(principal(Service.CONNECT, principals))
                .read(topics.itemState())
                .write(sinkDeadLetters)
                .create(sinkDeadLetters)
                .group("connect-" + CONNECTOR_NAME)
                .list());
        return new ServiceAcls(all);
    }

    /**
     * An embedded broker's security with these ACLs: the admin and one principal per service, their
     * client files in {@code <dataDir>/credentials}.
     */
    public BrokerSecurity brokerSecurity(Path dataDir) {
        return BrokerSecurity.in(dataDir.resolve("credentials"),
                Arrays.stream(Service.values()).map(Service::principalName).toList(), all())
                // the services that check each other's tenant claims (docs/security.md, "Tenant claims")
                .sharing("tenant-claim.key", TenantClaims.KEY_FILE, List.of(Service.GATEWAY.principalName(),
                        Service.TOPOLOGY.principalName(), Service.TOOL_EXECUTOR.principalName()));
    }

    public List<AclBinding> of(Service service) {
        return bindings.get(service);
    }

    public List<AclBinding> all() {
        return bindings.values().stream().flatMap(List::stream).toList();
    }

    /** One line per ACL, grouped by principal: principal, permission, operation, resource type, pattern, name. */
    public List<String> lines() {
        List<String> lines = new ArrayList<>();
        for (List<AclBinding> each : bindings.values()) {
            each.stream().sorted(Comparator.comparing((AclBinding b) -> b.pattern().resourceType())
                            .thenComparing(b -> b.pattern().name()).thenComparing(b -> b.entry().operation()))
                    .map(ServiceAcls::line).forEach(lines::add);
        }
        return lines;
    }

    static String line(AclBinding binding) {
        return String.join(" ", binding.entry().principal(), binding.entry().permissionType().name(),
                binding.entry().operation().name(), binding.pattern().resourceType().name(),
                binding.pattern().patternType().name(), binding.pattern().name());
    }

    private static String principal(Service service, Map<Service, String> principals) {
        return principals.getOrDefault(service, "User:" + service.principalName());
    }

    /** The ACLs of one principal, built up grant by grant. */
    private static final class Grants {
        private final String principal;
        private final List<AclBinding> list = new ArrayList<>();

        Grants(String principal) {
            this.principal = principal;
        }

        Grants read(String... topics) {
            return topics(AclOperation.READ, topics);
        }

        Grants write(String... topics) {
            return topics(AclOperation.WRITE, topics);
        }

        Grants create(String... topics) {
            return topics(AclOperation.CREATE, topics);
        }

        /** Joining and committing offsets in its consumer group. */
        Grants group(String group) {
            return grant(ResourceType.GROUP, group, PatternType.LITERAL, AclOperation.READ);
        }

        /**
         * Reading the brokers' configuration (secrets stay hidden): a service's start reads the session timeouts its
         * group members may ask for ({@code ClusterCheck}), and without it keeps Kafka's 6 s.
         */
        Grants brokerConfigs() {
            return grant(ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL, AclOperation.DESCRIBE_CONFIGS);
        }

        /** Transactions under its own ids, and the idempotent writes every producer here makes. */
        Grants transactionalIdPrefix(String prefix) {
            grant(ResourceType.TRANSACTIONAL_ID, prefix, PatternType.PREFIXED, AclOperation.WRITE);
            grant(ResourceType.TRANSACTIONAL_ID, prefix, PatternType.PREFIXED, AclOperation.DESCRIBE);
            return grant(ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL, AclOperation.IDEMPOTENT_WRITE);
        }

        private Grants topics(AclOperation operation, String... topics) {
            for (String topic : topics) {
                grant(ResourceType.TOPIC, topic, PatternType.LITERAL, operation);
            }
            return this;
        }

        Grants grant(ResourceType type, String name, PatternType pattern, AclOperation operation) {
            list.add(new AclBinding(new ResourcePattern(type, name, pattern),
                    new AccessControlEntry(principal, "*", operation, AclPermissionType.ALLOW)));
            return this;
        }

        List<AclBinding> list() {
            return List.copyOf(list);
        }
    }
}
