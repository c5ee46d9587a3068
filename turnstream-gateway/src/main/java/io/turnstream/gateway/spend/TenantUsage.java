package io.turnstream.gateway.spend;

import io.turnstream.gateway.http.ApiError;
import io.turnstream.model.UITurnEvent;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What each tenant is running and has spent, as all gateway instances together did it: the turns started
 * (a {@code request} on {@code llm.turn-requests}, or admitted here a moment before it is read back), the
 * turns ended (their {@code turn_completed} / {@code turn_error}) and what each turn used so far (the
 * cumulative usage of its step checkpoints and of its end, so a step counted twice is counted once).
 * {@link #admit} refuses a turn over a tenant's {@link SpendLimits} with 429 and {@code Retry-After}.
 * A plain state machine: {@link UsageFeed} feeds it from Kafka, time comes from the injected clock.
 * Usage counts for the UTC day of the record that reported it; budgets reset at 00:00 UTC.
 */
public final class TenantUsage {

    private static final long MINUTE_MS = TimeUnit.MINUTES.toMillis(1);
    /** A turn whose end was never read is not counted as running after this long (its end was lost or never came). */
    static final long STALE_OPEN_TURN_MS = TimeUnit.HOURS.toMillis(24);
    /** How long an ended turn is remembered, so a late record of it is not counted as a new turn's. */
    private static final long ENDED_REMEMBERED_MS = TimeUnit.HOURS.toMillis(26);
    /** No one can know when a running turn ends; a short wait is the honest suggestion. */
    private static final long CONCURRENT_RETRY_SECONDS = 5;

    /** What a tenant used on one UTC day. */
    public record Spent(long tokens, double costUsd) {
    }

    private static final class Turn {
        final String tenant;
        /** epoch ms when it was accepted; 0 while only its usage or end was read */
        long requestedAt;
        boolean ended;
        long tokens;
        double costUsd;
        long touchedAt;

        Turn(String tenant) {
            this.tenant = tenant;
        }

        boolean running() {
            return requestedAt != 0 && !ended;
        }
    }

    private static final class Day {
        long epochDay;
        long tokens;
        double costUsd;
    }

    private final SpendLimits limits;
    private final Clock clock;
    private final Map<String, Turn> turns = new HashMap<>();
    private final Map<String, Integer> running = new HashMap<>();
    /** tenant -> turn id -> when it started, for the last minute */
    private final Map<String, Map<String, Long>> starts = new HashMap<>();
    private final Map<String, Day> days = new HashMap<>();
    private long prunedAt;

    public TenantUsage(SpendLimits limits, Clock clock) {
        this.limits = limits;
        this.clock = clock;
        this.prunedAt = clock.millis();
    }

    /**
     * Counts a turn as started now, on this instance, when the tenant is within its limits.
     *
     * @param tenantId null for the gateway without keys (all its turns are one tenant's)
     * @throws ApiError 429 with {@code Retry-After} when the tenant is over a budget or a limit
     */
    public synchronized void admit(String tenantId, String turnId) {
        String tenant = key(tenantId);
        long now = clock.millis();
        pruneNow(now);
        checkBudgets(tenantId, tenant, now);
        if (running.getOrDefault(tenant, 0) >= limits.maxConcurrentTurns()) {
            throw ApiError.tooManyRequests(who(tenantId) + " is running " + limits.maxConcurrentTurns()
                    + " turns, the limit (" + SpendLimits.MAX_CONCURRENT + ", across all gateway instances); "
                    + "try again when one finishes", CONCURRENT_RETRY_SECONDS);
        }
        Map<String, Long> recent = recentStarts(tenant, now);
        if (recent.size() >= limits.maxTurnsPerMinute()) {
            long oldest = recent.values().stream().mapToLong(Long::longValue).min().orElse(now);
            throw ApiError.tooManyRequests(who(tenantId) + " has started " + limits.maxTurnsPerMinute()
                    + " turns in the last minute, the limit (" + SpendLimits.MAX_PER_MINUTE + ", across all gateway "
                    + "instances)", ceilSeconds(oldest + MINUTE_MS - now));
        }
        started(turn(tenant, turnId, now), turnId, now);
    }

    /** A turn {@link #admit}ted here did not reach Kafka: it never started. */
    public synchronized void withdraw(String turnId) {
        Turn turn = turns.remove(turnId);
        if (turn != null) {
            if (turn.running()) {
                running.computeIfPresent(turn.tenant, (t, n) -> n <= 1 ? null : n - 1);
            }
            Map<String, Long> tenantStarts = starts.get(turn.tenant);
            if (tenantStarts != null) {
                tenantStarts.remove(turnId);
            }
        }
    }

    /** A turn request read from Kafka (whichever gateway accepted it). */
    public synchronized void requested(String tenantId, String turnId, long requestedAt) {
        long now = clock.millis();
        Turn turn = turn(key(tenantId), turnId, now);
        if (turn.requestedAt == 0) {
            started(turn, turnId, requestedAt);
        }
        pruneNow(now);
    }

    /**
     * The turn's usage so far (cumulative, as a step checkpoint or the turn's end reports it): what is new
     * since the last report counts for the UTC day of {@code at}.
     *
     * @param at epoch ms of the record that reports it
     */
    public synchronized void used(String tenantId, String turnId, long totalTokens, double costUsd, long at) {
        Turn turn = turn(key(tenantId), turnId, clock.millis());
        long newTokens = Math.max(0, totalTokens - turn.tokens);
        double newCost = Math.max(0, costUsd - turn.costUsd);
        turn.tokens = Math.max(turn.tokens, totalTokens);
        turn.costUsd = Math.max(turn.costUsd, costUsd);
        if (newTokens == 0 && newCost == 0) {
            return;
        }
        Day day = days.computeIfAbsent(turn.tenant, t -> new Day());
        long epochDay = epochDay(at);
        if (epochDay > day.epochDay) {
            day.epochDay = epochDay;
            day.tokens = 0;
            day.costUsd = 0;
        }
        if (epochDay == day.epochDay) {
            day.tokens += newTokens;
            day.costUsd += newCost;
        }
    }

    /** The turn ended (on any gateway); {@code tenantId} as the turn's records name it. */
    public synchronized void ended(String tenantId, String turnId) {
        endTurn(turn(key(tenantId), turnId, clock.millis()));
    }

    /**
     * The turn's end as {@code llm.upserts} has it ({@code turn_completed} or {@code turn_error}): its final
     * usage counts, its failed model calls' included (they are spent too, however the turn ended), then it ends.
     *
     * @param at epoch ms of the record
     */
    public synchronized void ended(String tenantId, String turnId, UITurnEvent end, long at) {
        used(tenantId, turnId, tokens(end.usage()) + tokens(end.failedAttemptsUsage()),
                cost(end.usage()) + cost(end.failedAttemptsUsage()), at);
        ended(tenantId, turnId);
    }

    private static long tokens(UITurnEvent.Usage usage) {
        return usage == null ? 0 : usage.totalTokens();
    }

    private static double cost(UITurnEvent.Usage usage) {
        return usage == null || usage.costUsd() == null ? 0 : usage.costUsd();
    }

    /** A turn that ran on this gateway ended here; nothing when it is not known. */
    public synchronized void endedHere(String turnId) {
        Turn turn = turns.get(turnId);
        if (turn != null) {
            endTurn(turn);
        }
    }

    /** What the tenant used today (UTC). */
    public synchronized Spent today(String tenantId) {
        Day day = days.get(key(tenantId));
        return day == null || day.epochDay != epochDay(clock.millis()) ? new Spent(0, 0) : new Spent(day.tokens, day.costUsd);
    }

    /** How many of the tenant's turns run now, on all instances as far as Kafka has told. */
    public synchronized int running(String tenantId) {
        return running.getOrDefault(key(tenantId), 0);
    }

    private void checkBudgets(String tenantId, String tenant, long now) {
        Spent spent = today(tenantId);
        long tokenBudget = limits.tokensPerDay(tenant);
        double costBudget = limits.costUsdPerDay(tenant);
        Instant resets = LocalDate.ofEpochDay(epochDay(now) + 1).atStartOfDay(ZoneOffset.UTC).toInstant();
        long retryAfter = ceilSeconds(resets.toEpochMilli() - now);
        if (tokenBudget > 0 && spent.tokens() >= tokenBudget) {
            throw ApiError.tooManyRequests(who(tenantId) + " has used " + spent.tokens() + " tokens today, its daily "
                    + "token budget of " + tokenBudget + " (" + limits.tokensKey(tenant) + "); it resets at " + resets,
                    retryAfter);
        }
        if (costBudget > 0 && spent.costUsd() >= costBudget) {
            throw ApiError.tooManyRequests(who(tenantId) + " has spent " + String.format(java.util.Locale.ROOT, "%.4f",
                    spent.costUsd()) + " USD today, its daily cost budget of " + costBudget + " USD ("
                    + limits.costKey(tenant) + "); it resets at " + resets, retryAfter);
        }
    }

    private Turn turn(String tenant, String turnId, long now) {
        Turn turn = turns.computeIfAbsent(turnId, id -> new Turn(tenant));
        turn.touchedAt = now;
        return turn;
    }

    private void started(Turn turn, String turnId, long at) {
        turn.requestedAt = at;
        if (!turn.ended) {
            running.merge(turn.tenant, 1, Integer::sum);
        }
        starts.computeIfAbsent(turn.tenant, t -> new LinkedHashMap<>()).put(turnId, at);
    }

    private void endTurn(Turn turn) {
        if (turn.running()) {
            running.computeIfPresent(turn.tenant, (t, n) -> n <= 1 ? null : n - 1);
        }
        turn.ended = true;
    }

    private Map<String, Long> recentStarts(String tenant, long now) {
        Map<String, Long> recent = starts.computeIfAbsent(tenant, t -> new LinkedHashMap<>());
        recent.values().removeIf(at -> at <= now - MINUTE_MS);
        return recent;
    }

    /** At most once a minute: forgets what no limit needs any more, so memory follows the traffic of a day. */
    private void pruneNow(long now) {
        if (now - prunedAt < MINUTE_MS) {
            return;
        }
        prunedAt = now;
        turns.values().removeIf(turn -> {
            if (turn.running() && turn.requestedAt < now - STALE_OPEN_TURN_MS) {
                endTurn(turn);
            }
            return !turn.running() && turn.touchedAt < now - ENDED_REMEMBERED_MS;
        });
        starts.values().forEach(recent -> recent.values().removeIf(at -> at <= now - MINUTE_MS));
        starts.values().removeIf(Map::isEmpty);
    }

    private static long epochDay(long epochMillis) {
        return Math.floorDiv(epochMillis, TimeUnit.DAYS.toMillis(1));
    }

    private static long ceilSeconds(long millis) {
        return Math.max(1, (millis + 999) / 1000);
    }

    private static String key(String tenantId) {
        return tenantId == null ? "" : tenantId;
    }

    private static String who(String tenantId) {
        return tenantId == null ? "this gateway" : "tenant " + tenantId;
    }
}
