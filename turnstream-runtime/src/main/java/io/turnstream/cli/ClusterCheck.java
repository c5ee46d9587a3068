package io.turnstream.cli;

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
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.TimeoutException;

/**
 * Fails fast, with one clear line, when the cluster cannot be reached or lacks the topics a
 * command needs: Kafka clients would otherwise retry quietly for minutes.
 */
public final class ClusterCheck {

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

    public static void require(Settings settings, Collection<String> requiredTopics) {
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
            admin.describeCluster(new DescribeClusterOptions().timeoutMs(timeoutMs))
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
        } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
            throw unavailable(servers, timeout, e instanceof ExecutionException ? e.getCause() : e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CliFailure(ExitCodes.FAILURE, "interrupted while connecting to " + servers, e);
        } finally {
            admin.close(Duration.ofSeconds(1));
        }
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
