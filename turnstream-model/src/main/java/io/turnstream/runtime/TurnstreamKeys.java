package io.turnstream.runtime;

import io.turnstream.model.Topics;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * Every configuration key Turnstream reads, in one place: the exact keys and the families that take a name (a model,
 * a tool, a tenant). A key starting with {@code turnstream.} that is not here is a mistake (a misspelling, an old
 * name) that no component would ever read; {@link #requireKnown} refuses it, naming the nearest known key. Keys not
 * starting with {@code turnstream.} belong to Kafka, which checks its own. A component that reads a new key adds it
 * here; the keys are documented in docs/runtime.md (configuration file), docs/gateway.md and docs/tool-executor.md.
 */
public final class TurnstreamKeys {

    public static final String PREFIX = "turnstream.";
    /** Where the keys are documented, named in the error. */
    public static final String DOCUMENTED_IN = "docs/runtime.md#configuration-file (it links the gateway's "
            + "docs/gateway.md and the tool executor's docs/tool-executor.md)";

    private static final String GATEWAY = PREFIX + "gateway.";
    private static final String TOOL_EXECUTOR = PREFIX + "tool-executor.";

    /** A family of keys that take a name between {@code prefix} and {@code suffix} (empty: the name ends the key). */
    record Family(String prefix, String placeholder, String suffix) {

        boolean matches(String key) {
            return key.startsWith(prefix) && key.endsWith(suffix) && key.length() > prefix.length() + suffix.length();
        }

        /** How the family is documented, for instance {@code turnstream.gateway.price.<model>}. */
        String pattern() {
            return prefix + placeholder + suffix;
        }

        /** The family's key nearest to {@code key}: its own middle part where it has one. */
        String closestMember(String key) {
            int end = key.length() - suffix.length();
            String name = end > prefix.length() ? key.substring(prefix.length(), end) : placeholder;
            return prefix + name + suffix;
        }
    }

    /** Sorted, so that the nearest of two equally near keys is always the same one. */
    private static final SortedSet<String> EXACT = Collections.unmodifiableSortedSet(new TreeSet<>(exactKeys()));
    private static final List<Family> FAMILIES = List.of(
            new Family(GATEWAY + "price.", "<model>", ""),
            new Family(GATEWAY + "context-window.", "<model>", ""),
            new Family(GATEWAY + "tenant.", "<tenant>", ".max-tokens-per-day"),
            new Family(GATEWAY + "tenant.", "<tenant>", ".max-cost-usd-per-day"),
            new Family(GATEWAY + "tenant.", "<tenant>", ".allowed-models"),
            new Family(TOOL_EXECUTOR + "timeout-ms.", "<tool>", ""),
            new Family(TOOL_EXECUTOR + "approval.", "<tool>", ""));

    private TurnstreamKeys() {
    }

    private static List<String> exactKeys() {
        List<String> keys = new ArrayList<>();
        // model and runtime: topics, wire format, tenant claims, the start-up check, health, metrics
        Topics.DEFAULTS.byRole().keySet().forEach(role -> keys.add(Topics.PREFIX + role));
        keys.addAll(List.of(Topics.PREFIX + "tool-ledger", Topics.PREFIX + "tool-calls-dead-letters",
                PREFIX + "serde.format", PREFIX + "tenant-claims.key-file", PREFIX + "connect.timeout.ms",
                PREFIX + "health.host", PREFIX + "metrics.kafka-refresh.ms"));
        // the topology and its service
        keys.addAll(List.of(PREFIX + "batch.gradient", PREFIX + "batch.min-growth-fraction", PREFIX + "batch.timeout.ms",
                PREFIX + "turn.idle-timeout.ms", PREFIX + "punctuate.interval.ms", PREFIX + "turn.closed-retention.ms",
                PREFIX + "item-state.retention.ms", PREFIX + "application.id", PREFIX + "state.dir",
                PREFIX + "commit.interval.ms", PREFIX + "commit.behind-interval.ms", PREFIX + "commit.behind-after.ms",
                PREFIX + "streams.max-thread-replacements", PREFIX + "streams.thread-replacement-window.ms",
                PREFIX + "streams.close-timeout.ms"));
        // the gateway
        Stream.of("host", "port", "management.host", "management.port", "anthropic.thinking-budget", "fallback-model",
                "max-steps", "max-steps-limit", "max-tokens", "stall-timeout-ms", "retry.max-attempts",
                "retry.base-delay-ms", "retry.max-delay-ms", "tool-result-timeout-ms", "max-concurrent-turns",
                "approvals.on-deny", "thread.busy-policy", "group-id", "commit-interval-ms", "drain-timeout-ms",
                "rebalance-handover-ms", "compaction.threshold", "compaction.default-context-window",
                "compaction.keep-recent-tokens", "view.replay-buffer", "view.max-buffered-turns", "view.max-state-turns",
                "view.max-queued-per-client", "view.heartbeat-ms", "api-keys-file", "insecure", "cors.allowed-origins",
                "max-body-bytes", "max-field-chars", "unknown-turn-grace-ms", "allowed-models",
                "tenant.max-requests-per-second", "tenant.max-open-streams", "tenant.max-concurrent-turns",
                "tenant.max-turns-per-minute", "tenant.max-tokens-per-day", "tenant.max-cost-usd-per-day",
                "tenant.usage-lookback-ms").forEach(key -> keys.add(GATEWAY + key));
        keys.addAll(List.of(PREFIX + "simulated.answer-tokens", PREFIX + "simulated.tokens-per-second"));
        // the tool executor
        Stream.of("workspace", "workspace-per-thread", "instance-id", "group-id", "max-concurrency", "max-in-flight",
                "tenant-max-in-flight", "timeout-ms", "max-timeout-ms", "max-output-bytes", "max-output-lines",
                "abort-siblings-on-failure", "doom-loop-threshold", "turn-memory-ms", "shutdown-grace-ms",
                "ledger-retention-ms", "approval-timeout-ms", "max-write-bytes", "max-file-bytes", "tenant-quota-bytes")
                .forEach(key -> keys.add(TOOL_EXECUTOR + key));
        return keys;
    }

    /** Whether Turnstream reads {@code key}; true for every key not starting with {@code turnstream.} (Kafka's). */
    public static boolean isKnown(String key) {
        return !key.startsWith(PREFIX) || EXACT.contains(key) || FAMILIES.stream().anyMatch(family -> family.matches(key));
    }

    /** The known key (or family, as documented: {@code turnstream.gateway.price.<model>}) nearest to {@code key}. */
    public static String nearest(String key) {
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String known : EXACT) {
            int distance = distance(key, known);
            if (distance < bestDistance) {
                best = known;
                bestDistance = distance;
            }
        }
        for (Family family : FAMILIES) {
            int distance = distance(key, family.closestMember(key));
            if (distance < bestDistance) {
                best = family.pattern();
                bestDistance = distance;
            }
        }
        return best;
    }

    /**
     * Refuses the {@code turnstream.} keys Turnstream does not read.
     *
     * @param source where the keys come from, for the message (a file name)
     * @throws UnknownKeyException naming each unknown key and the nearest known one
     */
    public static void requireKnown(Properties props, String source) {
        List<String> unknown = props.stringPropertyNames().stream().filter(key -> !isKnown(key))
                .sorted(Comparator.naturalOrder()).map(key -> key + " (did you mean " + nearest(key) + "?)").toList();
        if (!unknown.isEmpty()) {
            throw new UnknownKeyException(source + ": unknown Turnstream setting" + (unknown.size() == 1 ? " " : "s ")
                    + String.join(", ", unknown) + "; Turnstream's settings are listed in " + DOCUMENTED_IN
                    + "; keys not starting with " + PREFIX + " go to Kafka unchanged");
        }
    }

    /** Levenshtein distance: insertions, deletions and substitutions. */
    private static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }

    /** A {@code turnstream.} key that Turnstream does not read. */
    public static final class UnknownKeyException extends IllegalArgumentException {
        UnknownKeyException(String message) {
            super(message);
        }
    }

    /** Every exact key, sorted (for documentation and tests). */
    public static List<String> exact() {
        return List.copyOf(EXACT);
    }

    /** Every family as documented, for instance {@code turnstream.gateway.price.<model>}. */
    public static List<String> families() {
        return FAMILIES.stream().map(Family::pattern).toList();
    }
}
