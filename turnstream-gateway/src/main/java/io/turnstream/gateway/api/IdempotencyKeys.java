package io.turnstream.gateway.api;

import io.turnstream.gateway.http.ApiError;
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.schema.SchemaRegistryException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * {@code Idempotency-Key} on the requests that start a turn: a key sent again with the same request (route and
 * body) within {@link #RETENTION} gives the turn the first request started, and no second turn, whichever gateway
 * instance gets it; with another request it is a 422. Keys are per tenant. What a key started is known from Kafka
 * ({@link IdempotencyIndex}: every request record carries its key and fingerprint), and the turn's ids follow from
 * the tenant, the key and the request ({@link IdempotentStart}), so two gateways that accept the same request at the
 * same moment name the same turn, which the gateway running its thread runs once. Two different requests under one
 * key at the same moment, before either gateway has read the other's, are both put on Kafka; the first in its
 * partition wins ({@link IdempotencyIndex#keyTakenBy}): the gateway that accepted the other waits until it reads its
 * request back and answers 422, and the gateway running the thread ends that turn unrun. A duplicate that arrives at
 * this instance while the first is still being accepted waits for it. While the index cannot read a request record for
 * now (on Avro, a schema registry that cannot be reached), a key it does not know may have been taken: the request is
 * refused with a 503 to retry, not started ({@link IdempotencyIndex#waitingFor}); so is a request put on Kafka that the
 * index cannot read back to tell whether it took its key (sent again, it names the same turn).
 */
public final class IdempotencyKeys {

    public static final String HEADER = "Idempotency-Key";
    public static final Duration RETENTION = Duration.ofHours(24);
    /** What a request refused while the index cannot read on is told to wait: the index's reader retries within it. */
    private static final Duration RETRY_AFTER = Duration.ofSeconds(5);
    private static final Pattern KEY = Pattern.compile("[\\x21-\\x7e]{1,255}");

    /** @param replayed the key was seen: {@code turn} is the one its first request started */
    public record Started(TurnStatus turn, boolean replayed) {
    }

    private record InFlight(String fingerprint, CompletableFuture<Started> outcome) {
    }

    private final IdempotencyIndex index;
    private final Function<String, Optional<String>> threadOfTurn;
    private final Clock clock;
    private final Duration verdictWait;
    /** Keys being accepted on this instance now, by tenant and key. */
    private final Map<String, InFlight> inFlight = new HashMap<>();

    /**
     * @param threadOfTurn the thread of a turn Kafka holds (empty when it holds none): the same request under a key
     *                     whose turn Kafka shows (the key's record not read yet, or past {@link #RETENTION}) gets it
     * @param verdictWait how long a started request waits for the index to read it back, to learn whether it took its
     *                    key; past it, it is taken to have (the gateway running the turn decides from Kafka anyway),
     *                    unless the index waits for the schema registry meanwhile (a 503)
     */
    public IdempotencyKeys(IdempotencyIndex index, Function<String, Optional<String>> threadOfTurn, Clock clock,
                           Duration verdictWait) {
        this.index = index;
        this.threadOfTurn = threadOfTurn;
        this.clock = clock;
        this.verdictWait = verdictWait;
    }

    /**
     * Starts a turn unless the key already did.
     *
     * @param key the header's value; null to start without one
     * @param request what identifies the request: its route and body
     * @param start starts the turn, under the key's ids when given one; what it throws is thrown (and the key stays
     *              free for a retry)
     */
    public Started start(String tenantId, String key, String request, Function<IdempotentStart, TurnStatus> start) {
        if (key == null) {
            return new Started(start.apply(null), false);
        }
        if (!KEY.matcher(key).matches()) {
            throw ApiError.badRequest(HEADER + " must be 1 to 255 visible ASCII characters");
        }
        IdempotentStart keyed = new IdempotentStart(tenantId, key, sha256(request));
        String id = (tenantId == null ? "" : tenantId) + '\n' + key;
        InFlight mine = new InFlight(keyed.fingerprint(), new CompletableFuture<>());
        InFlight seen;
        synchronized (inFlight) {
            seen = inFlight.putIfAbsent(id, mine);
        }
        if (seen != null) {
            if (!seen.fingerprint().equals(keyed.fingerprint())) {
                throw reused(key);
            }
            return new Started(awaitFirst(seen.outcome()).turn(), true);
        }
        try {
            Started started = startOnce(keyed, start);
            mine.outcome().complete(started);
            return started;
        } catch (RuntimeException e) {
            mine.outcome().completeExceptionally(e);
            throw e;
        } finally {
            synchronized (inFlight) {
                inFlight.remove(id);
            }
        }
    }

    private Started startOnce(IdempotentStart keyed, Function<IdempotentStart, TurnStatus> start) {
        Optional<IdempotencyIndex.Taken> taken = index.find(keyed.tenantId(), keyed.key());
        if (taken.isPresent()) {
            if (!taken.get().fingerprint().equals(keyed.fingerprint())) {
                throw reused(keyed.key());
            }
            return new Started(taken.get().turn(), true);
        }
        Optional<String> kept = threadOfTurn.apply(keyed.turnId());
        if (kept.isPresent()) {
            return new Started(new TurnStatus(keyed.turnId(), kept.get(), keyed.runId(), TurnPhase.RUNNING), true);
        }
        index.waitingFor().ifPresent(registryDown -> {
            throw cannotCheck(keyed.key(), registryDown);
        });
        TurnStatus turn = start.apply(keyed);
        Optional<TurnStatus> winner;
        try {
            winner = index.keyTakenBy(turn.turnId(), verdictWait);
        } catch (SchemaRegistryException registryDown) {
            // not taken for a win: the request is on Kafka, and the same request sent again names the same turn
            throw cannotCheck(keyed.key(), registryDown);
        }
        if (winner.isPresent() && !winner.get().turnId().equals(turn.turnId())) {
            // another request took the key first, in Kafka's order; the gateway running the thread ends this turn
            throw reused(keyed.key());
        }
        // known here at once; the other gateways learn it from the request record
        index.remember(keyed.tenantId(), keyed.key(), new IdempotencyIndex.Taken(keyed.fingerprint(), turn,
                clock.millis()));
        return new Started(turn, false);
    }

    /** While the index cannot read the turn requests: a 503 to send the request again once it reads on. */
    private static ApiError cannotCheck(String key, SchemaRegistryException registryDown) {
        return new ApiError(503, HEADER + " '" + key + "' cannot be checked now: the gateway cannot read the turn "
                + "requests (" + registryDown.getMessage() + "); send the request again later",
                Map.of("Retry-After", String.valueOf(RETRY_AFTER.toSeconds())));
    }

    private static ApiError reused(String key) {
        return new ApiError(422, HEADER + " '" + key + "' was used for a different request (another route or body) "
                + "in the last 24 h; send a new key with a new request");
    }

    /** A duplicate of a request still being accepted gets its outcome: its turn, or what refused it. */
    private static Started awaitFirst(CompletableFuture<Started> first) {
        try {
            return first.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException cause) {
                throw cause;
            }
            throw e;
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
