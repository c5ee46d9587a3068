package io.turnstream.cli;

import io.turnstream.runtime.FailoverDefaults;
import io.turnstream.runtime.Failures;
import io.turnstream.runtime.Settings;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fails fast, with one clear line, when the cluster cannot be reached or lacks the topics a
 * command needs: Kafka clients would otherwise retry quietly for minutes.
 */
public final class ClusterCheck {

    private static final Logger LOG = LoggerFactory.getLogger(ClusterCheck.class);
    private static final String MIN_SESSION_TIMEOUT = "group.min.session.timeout.ms";
    private static final String MAX_SESSION_TIMEOUT = "group.max.session.timeout.ms";

    /** How long the check waits for the cluster to answer. */
    public static final String CONNECT_TIMEOUT_MS = "turnstream.connect.timeout.ms";

    private ClusterCheck() {
    }

    /** Admin client properties from the settings: connection and security, nothing meant for other clients. */
    public static Properties adminProperties(Settings settings) {
        Properties all = settings.kafkaProperties();
        Set<String> adminKeys = AdminClientConfig.configNames();
        Properties admin = new Properties();
        all.stringPropertyNames().stream()
                .filter(adminKeys::contains)
                .forEach(key -> admin.setProperty(key, all.getProperty(key)));
        return admin;
    }

    /**
     * Checks that the cluster answers and holds {@code requiredTopics}, and returns {@code settings} with what depends
     * on the cluster filled in: the group members' session timeout, as short as the brokers allow
     * ({@link FailoverDefaults#sessionTimeoutAllowed}), unless the settings give one.
     */
    public static Settings require(Settings settings, Collection<String> requiredTopics) {
        String servers = settings.bootstrapServers();
        Duration timeout = Duration.ofMillis(settings.getLong(CONNECT_TIMEOUT_MS, 10_000));
        int timeoutMs = (int) timeout.toMillis();
        requireResolvable(servers);
        Properties props = adminProperties(settings);
        props.setProperty(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, String.valueOf(timeoutMs));
        props.setProperty(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, String.valueOf(timeoutMs));
        Admin admin;
        try {
            admin = Admin.create(props);
        } catch (KafkaException e) {
            throw new CliFailure(Failures.causedBy(e, ConfigException.class) ? ExitCodes.CONFIG : ExitCodes.UNAVAILABLE,
                    "invalid Kafka client configuration: " + Failures.rootCause(e).getMessage(), e);
        }
        try {
            Collection<Node> nodes = admin.describeCluster(new DescribeClusterOptions().timeoutMs(timeoutMs))
                    .nodes().get(timeoutMs + 1000L, TimeUnit.MILLISECONDS);
            if (!requiredTopics.isEmpty()) {
                Set<String> existing = admin.listTopics(new ListTopicsOptions().timeoutMs(timeoutMs))
                        .names().get(timeoutMs + 1000L, TimeUnit.MILLISECONDS);
                List<String> missing = requiredTopics.stream().filter(t -> !existing.contains(t)).sorted().toList();
                if (!missing.isEmpty()) {
                    throw new CliFailure(ExitCodes.UNAVAILABLE, "topics missing on " + servers + ": "
                            + String.join(", ", missing) + " (create them with `turnstream topics`)");
                }
            }
            return withSessionTimeout(settings, admin, nodes, timeoutMs);
        } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
            throw unavailable(servers, timeout, e instanceof ExecutionException ? e.getCause() : e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CliFailure(ExitCodes.FAILURE, "interrupted while connecting to " + servers, e);
        } finally {
            admin.close(Duration.ofSeconds(1));
        }
    }

    /**
     * The session timeout a classic group member asks for is Turnstream's 3 s where the brokers allow it, else the
     * nearest they allow, read from one broker's {@code group.min/max.session.timeout.ms} (a cluster's brokers share
     * them; one outside the range refuses the member and says so). Where they cannot be read (a principal without
     * DescribeConfigs on the cluster) the members keep the 6 s that Kafka's defaults allow.
     */
    private static Settings withSessionTimeout(Settings settings, Admin admin, Collection<Node> nodes, int timeoutMs)
            throws InterruptedException {
        Properties kafka = settings.kafkaProperties();
        boolean classic = "classic".equalsIgnoreCase(
                kafka.getProperty(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic"));
        if (!classic || kafka.containsKey(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG) || nodes.isEmpty()) {
            return settings;
        }
        ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER,
                Integer.toString(nodes.iterator().next().id()));
        try {
            Config config = admin.describeConfigs(List.of(broker), new DescribeConfigsOptions().timeoutMs(timeoutMs))
                    .all().get(timeoutMs + 1000L, TimeUnit.MILLISECONDS).get(broker);
            int allowed = FailoverDefaults.sessionTimeoutAllowed(
                    intValue(config, MIN_SESSION_TIMEOUT), intValue(config, MAX_SESSION_TIMEOUT));
            return settings.with(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, Integer.toString(allowed));
        } catch (ExecutionException | java.util.concurrent.TimeoutException | RuntimeException e) {
            LOG.info("cannot read the brokers' {} ({}): group members keep a {} ms session timeout",
                    MIN_SESSION_TIMEOUT, Failures.describe(e instanceof ExecutionException ? e.getCause() : e),
                    FailoverDefaults.SESSION_TIMEOUT_MS);
            return settings;
        }
    }

    private static int intValue(Config config, String name) {
        ConfigEntry entry = config.get(name);
        if (entry == null || entry.value() == null) {
            throw new IllegalStateException("the broker did not report " + name);
        }
        return Integer.parseInt(entry.value());
    }

    /** Kafka only warns about names it cannot resolve and then fails vaguely; say it plainly instead. */
    private static void requireResolvable(String servers) {
        List<String> hosts = Arrays.stream(servers.split(","))
                .map(String::strip)
                .filter(s -> !s.isEmpty())
                .map(s -> s.substring(0, Math.max(0, s.lastIndexOf(':'))).replaceAll("^\\[|]$", ""))
                .toList();
        for (String host : hosts) {
            try {
                InetAddress.getAllByName(host);
                return;
            } catch (UnknownHostException unresolved) {
                // try the next one: Kafka needs only one
            }
        }
        throw new CliFailure(ExitCodes.UNAVAILABLE, "cannot resolve any host of the bootstrap servers " + servers);
    }

    private static CliFailure unavailable(String servers, Duration timeout, Throwable cause) {
        if (cause instanceof TimeoutException || cause instanceof java.util.concurrent.TimeoutException) {
            return new CliFailure(ExitCodes.UNAVAILABLE, "cannot reach Kafka at " + servers + " within "
                    + timeout.toSeconds() + " s: is the broker running, and are --bootstrap-servers (or "
                    + Settings.BOOTSTRAP_ENV + ") and the security settings in --config right?", cause);
        }
        if (cause instanceof AuthenticationException) {
            return new CliFailure(ExitCodes.UNAVAILABLE, "Kafka at " + servers + " refused authentication: "
                    + cause.getMessage() + " (check the security settings in --config)", cause);
        }
        if (cause instanceof AuthorizationException) {
            return new CliFailure(ExitCodes.UNAVAILABLE, "not authorised on Kafka at " + servers + ": "
                    + cause.getMessage(), cause);
        }
        return new CliFailure(ExitCodes.UNAVAILABLE, "Kafka at " + servers + " failed: " + Failures.describe(cause), cause);
    }
}
