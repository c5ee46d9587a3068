package io.turnstream.tools;

import io.turnstream.runtime.Settings;
import java.time.Duration;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Which tool calls need a person's approval before they run: a policy per tool, {@code allow}
 * (runs, the default, so nothing changes unless configured), {@code ask} (waits for an approval
 * decision on {@code llm.control}, denied when none arrives within {@code timeout}) or
 * {@code deny} (never runs). With any tool on {@code ask}, the doom-loop guard asks instead of
 * refusing a repeated call.
 *
 * @param policies per tool name, from {@code turnstream.tool-executor.approval.<tool>}
 * @param defaultPolicy for the tools not named, from {@code turnstream.tool-executor.approval.default}
 */
public record ToolApprovals(Map<String, Policy> policies, Policy defaultPolicy, Duration timeout) {

    public static final String PREFIX = ToolExecutorConfig.PREFIX + "approval.";
    private static final String DEFAULT_KEY = "default";

    public enum Policy { ALLOW, ASK, DENY }

    public ToolApprovals {
        policies = Map.copyOf(policies);
    }

    static ToolApprovals from(Settings settings) {
        Map<String, Policy> policies = new HashMap<>();
        Policy fallback = Policy.ALLOW;
        for (String key : settings.all().stringPropertyNames()) {
            if (key.startsWith(PREFIX)) {
                Policy policy = parse(key, settings.get(key, ""));
                String tool = key.substring(PREFIX.length());
                if (DEFAULT_KEY.equals(tool)) {
                    fallback = policy;
                } else {
                    policies.put(tool, policy);
                }
            }
        }
        long timeoutMs = settings.getLong(ToolExecutorConfig.PREFIX + "approval-timeout-ms", 300_000);
        if (timeoutMs <= 0) {
            throw new IllegalArgumentException(ToolExecutorConfig.PREFIX + "approval-timeout-ms must be positive");
        }
        return new ToolApprovals(policies, fallback, Duration.ofMillis(timeoutMs));
    }

    private static Policy parse(String key, String value) {
        try {
            return Policy.valueOf(value.strip().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(key + " must be allow, ask or deny, got '" + value + "'");
        }
    }

    Policy policyFor(String tool) {
        return policies.getOrDefault(tool, defaultPolicy);
    }

    /** Whether any call may wait for approval. */
    boolean enabled() {
        return defaultPolicy == Policy.ASK || policies.containsValue(Policy.ASK);
    }
}
