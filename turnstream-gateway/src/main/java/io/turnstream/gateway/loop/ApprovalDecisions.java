package io.turnstream.gateway.loop;

import java.time.Duration;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The approval rounds of tool calls as {@code llm.control} tells them, for every turn (whichever
 * gateway runs it): a tool executor asks ({@code approval_requested}), and the first decision
 * ({@code approval}) after the ask is the one the executor applies, because both read the turn's
 * control partition in the same order. Later decisions change nothing; a new ask (the call was
 * taken over by another executor) opens a new round.
 */
public final class ApprovalDecisions {

    static final int KEPT = 10_000;
    /** How long a request waits for its decision to be published and read back. */
    public static final Duration CONFIRM_TIMEOUT = Duration.ofSeconds(10);

    /** A decision that stands. */
    public record Decision(boolean approved, String reason) {
    }

    /** One ask and its first decision. */
    public static final class Round {
        public final CompletableFuture<Void> asked = new CompletableFuture<>();
        public final CompletableFuture<Decision> decision = new CompletableFuture<>();
        /** The tool the ask named, when it did. */
        private volatile String toolName;

        public String toolName() {
            return toolName;
        }

        /** Asked and not decided: a person may still be about to decide it. */
        boolean pending() {
            return asked.isDone() && !decision.isDone();
        }
    }

    /**
     * turn/call -> round. Past {@value #KEPT} the least recently used round that is not pending goes (rounds
     * for calls no one asked about first come and go this way): a pending approval is never evicted, so no
     * flood of requests for unknown call ids, from any tenant, loses another tenant's ask.
     */
    private final Map<String, Round> rounds = Collections.synchronizedMap(
            new LinkedHashMap<>(16, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Round> eldest) {
                    if (size() > KEPT) {
                        Iterator<Round> oldestFirst = values().iterator();
                        while (oldestFirst.hasNext()) {
                            if (!oldestFirst.next().pending()) {
                                oldestFirst.remove();
                                break;
                            }
                        }
                    }
                    return false;
                }
            });

    /** The call's current round, created (not yet asked) when none is known. */
    public Round round(String turnId, String callId) {
        return rounds.computeIfAbsent(key(turnId, callId), k -> new Round());
    }

    /** @param toolName the tool the ask names (null from an executor that does not name it) */
    public void asked(String turnId, String callId, String toolName) {
        String key = key(turnId, callId);
        synchronized (rounds) {
            Round round = rounds.get(key);
            if (round == null || round.decision.isDone()) {
                round = new Round();
                rounds.put(key, round);
            }
            if (toolName != null) {
                round.toolName = toolName;
            }
            round.asked.complete(null);
        }
    }

    /**
     * An ask this gateway did not read on {@code llm.control} (it started after it) but a compacted
     * source shows ({@code llm.item-state}): the round counts as asked unless one is known.
     */
    public void askedBefore(String turnId, String callId, String toolName) {
        Round round = round(turnId, callId);
        if (round.toolName == null) {
            round.toolName = toolName;
        }
        round.asked.complete(null);
    }

    public void decided(String turnId, String callId, boolean approved, String reason) {
        Round round = rounds.get(key(turnId, callId));
        if (round != null && round.asked.isDone()) {
            round.decision.complete(new Decision(approved, reason));
        }
    }

    /**
     * A turn taken over from another gateway shows its calls that still wait for a decision as
     * awaiting approval again; the decision reaches the executor as before.
     */
    public void showAwaiting(String turnId, TurnProgress progress, TurnRegistry.ActiveTurn active) {
        if (progress.awaiting() == null) {
            return;
        }
        for (var call : progress.awaiting().calls()) {
            Round round = rounds.get(key(turnId, call.callId()));
            if (round != null && round.asked.isDone() && !round.decision.isDone()) {
                active.awaitingApproval(call.callId()).complete(null);
            }
        }
    }

    private static String key(String turnId, String callId) {
        return turnId + "/" + callId;
    }
}
