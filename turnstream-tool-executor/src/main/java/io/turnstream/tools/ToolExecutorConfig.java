package io.turnstream.tools;

import io.turnstream.runtime.Settings;
import io.turnstream.runtime.TenantClaims;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The tool executor's settings, from {@code turnstream.tool-executor.*} properties (see docs/tool-executor.md).
 *
 * @param instanceId      stable per instance: it is the consumer's static group membership and the producer's
 *                        transactional id, so a restarted instance takes over at once and fences its predecessor
 * @param maxConcurrency  the most concurrency-safe calls of one turn that run at once
 * @param maxInFlight     the most calls one instance holds (queued or running); above it, it stops fetching
 * @param tenantMaxInFlight the most of those one tenant's calls may hold: the rest stay for other tenants, so one
 *                        tenant never fills {@code maxInFlight} and pauses everyone's calls; above it, a tenant's
 *                        call is answered {@link ToolErrors#QUOTA_EXCEEDED}
 * @param turnMemory      how long an idle turn's state and a turn's cancellation are remembered
 * @param ledgerRetention how long the ledger keeps a call's mark; longer than a call can wait to be redelivered
 * @param workspacePerThread each thread's calls in a directory of their own below their tenant's (see {@link Workspaces})
 * @param writeQuota      what one call and one tenant's workspace may write ({@code max-write-bytes}, {@code max-file-bytes},
 *                        {@code tenant-quota-bytes})
 * @param claims          checks the gateway's signature of each call's tenant before the call runs in its workspace
 *                        ({@link TenantClaims})
 */
public record ToolExecutorConfig(Path workspace, String groupId, String instanceId, int maxConcurrency, int maxInFlight,
                                 int tenantMaxInFlight,
                                 Duration defaultTimeout, Duration maxTimeout, Map<String, Duration> toolTimeouts,
                                 OutputLimits limits, boolean abortSiblingsOnFailure, int doomLoopThreshold,
                                 Duration turnMemory, Duration shutdownGrace, String ledgerTopic, Duration ledgerRetention,
                                 String deadLetterTopic, boolean workspacePerThread, ToolApprovals approvals,
                                 WriteQuota writeQuota, TenantClaims claims) {

    public static final String PREFIX = "turnstream.tool-executor.";
    public static final String WORKSPACE = PREFIX + "workspace";
    private static final String TOOL_TIMEOUT_PREFIX = PREFIX + "timeout-ms.";

    public static ToolExecutorConfig from(Settings settings) {
        String workspace = settings.get(WORKSPACE, null);
        if (workspace == null || workspace.isBlank()) {
            throw new IllegalArgumentException("the tool executor needs a workspace directory (" + WORKSPACE + " or --workspace)");
        }
        Path workspacePath = Path.of(workspace).toAbsolutePath().normalize();
        Duration maxTimeout = millis(settings, "max-timeout-ms", 600_000);
        Map<String, Duration> toolTimeouts = new HashMap<>();
        for (String key : settings.all().stringPropertyNames()) {
            if (key.startsWith(TOOL_TIMEOUT_PREFIX)) {
                toolTimeouts.put(key.substring(TOOL_TIMEOUT_PREFIX.length()), millis(settings, key.substring(PREFIX.length()), 0));
            }
        }
        int maxInFlight = positive(settings, "max-in-flight", 100);
        int tenantMaxInFlight = positive(settings, "tenant-max-in-flight", Math.max(1, maxInFlight / 2));
        if (tenantMaxInFlight > maxInFlight) {
            throw new IllegalArgumentException(PREFIX + "tenant-max-in-flight (" + tenantMaxInFlight + ") must be at most "
                    + PREFIX + "max-in-flight (" + maxInFlight + "); equal to it, one tenant may hold every slot");
        }
        return new ToolExecutorConfig(
                workspacePath,
                groupId(settings),
                settings.get(PREFIX + "instance-id", defaultInstanceId(workspacePath)),
                positive(settings, "max-concurrency", 10),
                maxInFlight,
                tenantMaxInFlight,
                millis(settings, "timeout-ms", 120_000),
                maxTimeout,
                Map.copyOf(toolTimeouts),
                new OutputLimits(positive(settings, "max-output-bytes", 100 * 1024), positive(settings, "max-output-lines", 2000)),
                bool(settings, "abort-siblings-on-failure", true),
                positive(settings, "doom-loop-threshold", 3),
                millis(settings, "turn-memory-ms", 600_000),
                Duration.ofMillis(settings.getLong(PREFIX + "shutdown-grace-ms", 10_000)),
                ledgerTopic(settings),
                Duration.ofMillis(settings.getLong(PREFIX + "ledger-retention-ms", Duration.ofDays(7).toMillis())),
                deadLetterTopic(settings),
                bool(settings, "workspace-per-thread", false),
                ToolApprovals.from(settings),
                new WriteQuota(positiveLong(settings, "max-write-bytes", 10L << 20), positiveLong(settings, "max-file-bytes", 10L << 20),
                        positiveLong(settings, "tenant-quota-bytes", 1L << 30)),
                TenantClaims.from(settings, System.getenv()));
    }

    /** The executors' consumer group; also the prefix of their transactional ids. */
    public static String groupId(Settings settings) {
        return settings.get(PREFIX + "group-id", "turnstream-tool-executor");
    }

    /** The executor's own topics, which it creates: the call ledger and the dead letters of tool calls. */
    public static String ledgerTopic(Settings settings) {
        return settings.get("turnstream.topic.tool-ledger", "llm.tool-ledger");
    }

    public static String deadLetterTopic(Settings settings) {
        return settings.get("turnstream.topic.tool-calls-dead-letters", "llm.tool-calls.dlq");
    }

    /** The timeout of a tool's calls: configured for it, else its own, else the default; never above the maximum. */
    public Duration timeoutFor(Tool tool) {
        Duration wanted = Optional.ofNullable(toolTimeouts.get(tool.name())).or(tool::timeout).orElse(defaultTimeout);
        return wanted.compareTo(maxTimeout) > 0 ? maxTimeout : wanted;
    }

    /** Host name plus the workspace, so two executors on one host differ and a restart of one keeps its id. */
    private static String defaultInstanceId(Path workspace) {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            host = Optional.ofNullable(System.getenv("HOSTNAME")).orElse("localhost");
        }
        return host + "-" + Integer.toHexString(workspace.toString().hashCode());
    }

    private static int positive(Settings settings, String key, int fallback) {
        long value = settings.getLong(PREFIX + key, fallback);
        if (value < 1 || value > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(PREFIX + key + " must be a positive whole number, got " + value);
        }
        return (int) value;
    }

    private static long positiveLong(Settings settings, String key, long fallback) {
        long value = settings.getLong(PREFIX + key, fallback);
        if (value < 1) {
            throw new IllegalArgumentException(PREFIX + key + " must be a positive number of bytes, got " + value);
        }
        return value;
    }

    private static Duration millis(Settings settings, String key, long fallback) {
        return Duration.ofMillis(positive(settings, key, (int) fallback));
    }

    private static boolean bool(Settings settings, String key, boolean fallback) {
        String value = settings.get(PREFIX + key, Boolean.toString(fallback)).strip().toLowerCase(Locale.ROOT);
        if (!value.equals("true") && !value.equals("false")) {
            throw new IllegalArgumentException(PREFIX + key + " must be true or false, got '" + value + "'");
        }
        return Boolean.parseBoolean(value);
    }
}
