package io.turnstream.gateway.loop;

import io.turnstream.gateway.provider.CancelSignal;
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.model.ToolResult;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The turns this gateway runs, and the last few thousand it finished. Tool results and cancel
 * commands from Kafka are routed here by turn id.
 */
public final class TurnRegistry {

    private static final int FINISHED_KEPT = 5_000;

    /**
     * A running turn: its cancel signal, the request to hand it over to another gateway at its next
     * step boundary, and the results of its tool calls as they arrive.
     */
    public static final class ActiveTurn {
        public final TurnStatus status;
        public final CancelSignal cancel = new CancelSignal();
        public final CompletableFuture<Void> handover = new CompletableFuture<>();
        private final Map<String, CompletableFuture<ToolResult>> results = new ConcurrentHashMap<>();

        ActiveTurn(TurnStatus status) {
            this.status = status;
        }

        private final Map<String, CompletableFuture<Long>> started = new ConcurrentHashMap<>();
        private final Map<String, CompletableFuture<Void>> awaitingApproval = new ConcurrentHashMap<>();

        /** The result of a call, whether it has arrived yet or not. */
        public CompletableFuture<ToolResult> result(String callId) {
            return results.computeIfAbsent(callId, id -> new CompletableFuture<>());
        }

        /** Completes when the tool executor says the call waits for approval. */
        public CompletableFuture<Void> awaitingApproval(String callId) {
            return awaitingApproval.computeIfAbsent(callId, id -> new CompletableFuture<>());
        }

        /** When the tool executor started the call (epoch ms), once it has said so on the control topic. */
        public CompletableFuture<Long> started(String callId) {
            return started.computeIfAbsent(callId, id -> new CompletableFuture<>());
        }
    }

    private final Map<String, ActiveTurn> active = new ConcurrentHashMap<>();
    private final Map<String, TurnStatus> finished = Collections.synchronizedMap(
            new LinkedHashMap<>(16, 0.75f, false) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, TurnStatus> eldest) {
                    return size() > FINISHED_KEPT;
                }
            });

    /** Cancels that arrived before their turn started here (the request was still on its way). */
    private final Map<String, String> cancelledEarly = Collections.synchronizedMap(
            new LinkedHashMap<>(16, 0.75f, false) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
                    return size() > FINISHED_KEPT;
                }
            });

    public ActiveTurn register(TurnStatus status) {
        ActiveTurn turn = new ActiveTurn(status);
        active.put(status.turnId(), turn);
        String reason = cancelledEarly.remove(status.turnId());
        if (reason != null) {
            turn.cancel.cancel(reason);
        }
        return turn;
    }

    /** The turn goes on in another gateway: forget it here without a final status. */
    public void release(String turnId) {
        active.remove(turnId);
    }

    public void finish(String turnId, TurnPhase status) {
        ActiveTurn turn = active.remove(turnId);
        if (turn != null) {
            finished.put(turnId, turn.status.withStatus(status));
        }
    }

    /** @return false when no running turn has this id */
    public boolean deliver(String turnId, ToolResult result) {
        ActiveTurn turn = active.get(turnId);
        if (turn == null || result.callId() == null) {
            return false;
        }
        turn.result(result.callId()).complete(result);
        return true;
    }

    /** @return false when no running turn has this id */
    public boolean approvalRequested(String turnId, String callId) {
        ActiveTurn turn = active.get(turnId);
        if (turn == null || callId == null) {
            return false;
        }
        turn.awaitingApproval(callId).complete(null);
        return true;
    }

    /** @return false when no running turn has this id */
    public boolean toolStarted(String turnId, String callId, long at) {
        ActiveTurn turn = active.get(turnId);
        if (turn == null || callId == null) {
            return false;
        }
        turn.started(callId).complete(at);
        return true;
    }

    /**
     * Cancels a running turn; a turn not running here that has not finished here either is
     * remembered, in case its request is on its way to this gateway.
     *
     * @return false when no running turn has this id
     */
    public boolean cancel(String turnId, String reason) {
        ActiveTurn turn = active.get(turnId);
        if (turn == null) {
            if (!finished.containsKey(turnId)) {
                cancelledEarly.put(turnId, reason == null ? "cancelled" : reason);
            }
            return false;
        }
        turn.cancel.cancel(reason);
        return true;
    }

    public Optional<TurnStatus> status(String turnId) {
        ActiveTurn turn = active.get(turnId);
        return turn != null ? Optional.of(turn.status) : Optional.ofNullable(finished.get(turnId));
    }

    public int runningCount() {
        return active.size();
    }

    public List<ActiveTurn> running() {
        return List.copyOf(active.values());
    }
}
