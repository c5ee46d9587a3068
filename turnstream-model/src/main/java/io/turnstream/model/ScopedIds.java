package io.turnstream.model;

import java.util.regex.Pattern;

/**
 * What a client-chosen id (a thread id, a chat id, a tool call id in a path) may be, and how a thread id is
 * scoped to its tenant. Clients name threads themselves, so two tenants may pick the same name: wherever a
 * thread id is a key (the key of {@code llm.turn-requests}, the gateway's map of each thread's latest turn),
 * the key is {@code <tenantId>/<threadId>}. Neither a tenant id ({@link TenantIds}) nor a client id may hold
 * a {@code /}, so no two (tenant, thread) pairs share a key. The {@code threadId} fields of records and API
 * answers stay the id as the client sent it; the tenant travels in its own {@code tenantId} fields.
 */
public final class ScopedIds {

    public static final Pattern PATTERN = Pattern.compile("[A-Za-z0-9._:-]{1,128}");
    public static final String DESCRIPTION = "1 to 128 letters, digits, '.', '_', ':' or '-'";

    private ScopedIds() {
    }

    public static boolean isValid(String id) {
        return id != null && PATTERN.matcher(id).matches();
    }

    /**
     * The key of a tenant's thread: {@code <tenantId>/<threadId>}, or the thread id alone for a turn of no
     * tenant (the gateway without API keys).
     */
    public static String threadKey(String tenantId, String threadId) {
        return tenantId == null ? threadId : tenantId + "/" + threadId;
    }
}
