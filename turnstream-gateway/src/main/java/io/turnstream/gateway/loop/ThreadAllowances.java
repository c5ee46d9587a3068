package io.turnstream.gateway.loop;

import io.turnstream.model.ScopedIds;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The tools people allowed for the rest of a thread: an approval with {@code remember: true} allows the
 * call's tool in the tenant's thread from then on, so the turn's owner approves each later ask of that
 * tool in that thread itself. Kept on the compacted {@code llm.thread-allowances} (key
 * {@link #key}, value the approval that allowed it; a tombstone takes it back), which every gateway
 * reads from its beginning: a restart or a takeover keeps what was allowed.
 */
public final class ThreadAllowances {

    /** The {@code reason} of an approval the gateway gives for a tool allowed in the thread. */
    public static final String REASON = "allowed for the rest of the thread";

    private final Set<String> allowed = ConcurrentHashMap.newKeySet();

    /** {@code <tenantId>/<threadId>/<toolName>} ({@link ScopedIds#threadKey}, and the tool): no two share one. */
    public static String key(String tenantId, String threadId, String toolName) {
        return ScopedIds.threadKey(tenantId, threadId) + "/" + toolName;
    }

    /** A record of the topic: an allowance, or (null value) its tombstone. */
    public void apply(String key, boolean allowance) {
        if (key == null) {
            return;
        }
        if (allowance) {
            allowed.add(key);
        } else {
            allowed.remove(key);
        }
    }

    public boolean allows(String tenantId, String threadId, String toolName) {
        return toolName != null && allowed.contains(key(tenantId, threadId, toolName));
    }
}
