package io.turnstream.gateway.api;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * A turn started under an {@code Idempotency-Key}. Its ids follow from the tenant, the key and the request, so every
 * gateway that gets the request, or a retry of it, names the same turn, and the gateway running the thread runs it
 * once whichever of them put it on {@code llm.turn-requests}. The request record carries the key and the request's
 * fingerprint in its headers ({@link #KEY_HEADER}, {@link #FINGERPRINT_HEADER}), from which every gateway learns
 * which keys are taken ({@link IdempotencyIndex}).
 *
 * @param tenantId null for a gateway without keys
 * @param fingerprint SHA-256 (hex) of the request: its route and body
 */
public record IdempotentStart(String tenantId, String key, String fingerprint) {

    public static final String KEY_HEADER = "turnstream.idempotency-key";
    public static final String FINGERPRINT_HEADER = "turnstream.request-sha256";
    /**
     * Set on the request in its record: the gateway that runs the turn learns from it, without the record's headers,
     * that the turn must first have won its key ({@link IdempotencyIndex#keyTakenBy}).
     */
    public static final String MARKER = "idempotencyKeyed";

    public String turnId() {
        return "turn-" + uuid("turn");
    }

    public String runId() {
        return "run-" + uuid("run");
    }

    /**
     * The thread of a request that names none: of the key alone, not of the request, so that two different requests
     * under one key land in one partition of {@code llm.turn-requests}, where Kafka's order says which took the key.
     */
    public String threadId() {
        return "thread-" + UUID.nameUUIDFromBytes(("thread\n" + (tenantId == null ? "" : tenantId) + '\n' + key)
                .getBytes(StandardCharsets.UTF_8));
    }

    /** Whether a request as {@code llm.turn-requests} holds it was started under a key ({@link #MARKER}). */
    public static boolean keyed(JsonNode request) {
        return request != null && request.path(MARKER).asBoolean(false);
    }

    private String uuid(String role) {
        return UUID.nameUUIDFromBytes((role + '\n' + (tenantId == null ? "" : tenantId) + '\n' + key + '\n'
                + fingerprint).getBytes(StandardCharsets.UTF_8)).toString();
    }
}
