package io.turnstream.gateway.api;

import io.turnstream.gateway.http.ApiError;
import io.turnstream.gateway.turn.TurnStatus;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * {@code Idempotency-Key} on the requests that start a turn: a key sent again with the same request
 * (route and body) within {@link #RETENTION} gives the turn the first request started, and no second
 * turn; with another request it is a 422. Keys are per tenant. A duplicate that arrives while the first
 * is still being accepted waits for it. What this gateway instance accepted is what it knows: a retry
 * that reaches another instance starts a turn there (see docs/gateway.md). Bounded: past
 * {@code maxKeys} the oldest keys are forgotten first.
 */
public final class IdempotencyKeys {

    public static final String HEADER = "Idempotency-Key";
    public static final Duration RETENTION = Duration.ofHours(24);
    private static final Pattern KEY = Pattern.compile("[\\x21-\\x7e]{1,255}");

    /** @param replayed the key was seen: {@code turn} is the one its first request started */
    public record Started(TurnStatus turn, boolean replayed) {
    }

    private record Entry(String fingerprint, CompletableFuture<TurnStatus> turn, long expiresAt) {
    }

    private final Clock clock;
    private final int maxKeys;
    /** By tenant and key, in the order they were first used (so also of expiry). */
    private final Map<String, Entry> entries = new LinkedHashMap<>();

    public IdempotencyKeys(Clock clock, int maxKeys) {
        this.clock = clock;
        this.maxKeys = maxKeys;
    }

    /**
     * Starts a turn unless the key already did.
     *
     * @param key the header's value; null to start without one
     * @param request what identifies the request: its route and body
     * @param start starts the turn; what it throws is thrown (and the key stays free for a retry)
     */
    public Started start(String tenantId, String key, String request, Supplier<TurnStatus> start) {
        if (key == null) {
            return new Started(start.get(), false);
        }
        if (!KEY.matcher(key).matches()) {
            throw ApiError.badRequest(HEADER + " must be 1 to 255 visible ASCII characters");
        }
        String id = (tenantId == null ? "" : tenantId) + '\n' + key;
        String fingerprint = sha256(request);
        CompletableFuture<TurnStatus> mine = new CompletableFuture<>();
        Entry seen;
        synchronized (entries) {
            forgetExpired();
            seen = entries.get(id);
            if (seen == null) {
                entries.put(id, new Entry(fingerprint, mine, clock.millis() + RETENTION.toMillis()));
                if (entries.size() > maxKeys) {
                    Iterator<String> oldest = entries.keySet().iterator();
                    oldest.next();
                    oldest.remove();
                }
            }
        }
        if (seen != null) {
            if (!seen.fingerprint().equals(fingerprint)) {
                throw new ApiError(422, HEADER + " '" + key + "' was used for a different request (another route "
                        + "or body) in the last 24 h; send a new key with a new request");
            }
            return new Started(awaitFirst(seen.turn()), true);
        }
        try {
            TurnStatus turn = start.get();
            mine.complete(turn);
            return new Started(turn, false);
        } catch (RuntimeException e) {
            synchronized (entries) {
                entries.remove(id);
            }
            mine.completeExceptionally(e);
            throw e;
        }
    }

    /** A duplicate of a request still being accepted gets its outcome: its turn, or what refused it. */
    private static TurnStatus awaitFirst(CompletableFuture<TurnStatus> first) {
        try {
            return first.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException cause) {
                throw cause;
            }
            throw e;
        }
    }

    private void forgetExpired() {
        long now = clock.millis();
        Iterator<Entry> all = entries.values().iterator();
        while (all.hasNext() && all.next().expiresAt() <= now) {
            all.remove();
        }
    }

    private static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }
}
