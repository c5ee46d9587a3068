package io.turnstream.gateway;

import io.turnstream.gateway.api.ApprovalDesk;
import io.turnstream.gateway.api.TurnControl;
import io.turnstream.gateway.http.ApiError;
import io.turnstream.gateway.loop.ApprovalDecisions;
import io.turnstream.gateway.loop.ThreadAllowances;
import io.turnstream.gateway.loop.TurnRegistry;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.gateway.view.TurnSnapshot;
import io.turnstream.gateway.view.TurnViews;
import io.turnstream.model.ControlMessage;
import io.turnstream.runtime.Failures;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What people ask of turns already accepted: cancels and approval decisions, which go to
 * {@code llm.control} for whichever gateway runs the turn, and the turn's status and snapshot.
 */
public final class TurnCommands implements TurnControl, ApprovalDesk {

    private static final Logger LOG = LoggerFactory.getLogger(TurnCommands.class);

    private final TurnRegistry registry;
    private final ApprovalDecisions approvals;
    private final ThreadAllowances allowances;
    private final GatewayProducer producer;
    private final TurnViews views;
    private final Duration unknownTurnGrace;
    /** A turn requested on Kafka that neither runs here nor shows in the views yet (queued behind its thread). */
    private final Function<String, Optional<TurnStatus>> requested;

    TurnCommands(TurnRegistry registry, ApprovalDecisions approvals, ThreadAllowances allowances,
                 GatewayProducer producer, TurnViews views, Duration unknownTurnGrace,
                 Function<String, Optional<TurnStatus>> requested) {
        this.registry = registry;
        this.approvals = approvals;
        this.allowances = allowances;
        this.producer = producer;
        this.views = views;
        this.unknownTurnGrace = unknownTurnGrace;
        this.requested = requested;
    }

    @Override
    public CancelOutcome cancel(String turnId, String reason) {
        Optional<TurnStatus> status = registry.status(turnId);
        if (status.isPresent() && status.get().status().ended()) {
            return CancelOutcome.FINISHED;
        }
        try {
            producer.control(ControlMessage.cancel(turnId, reason))
                    .get(TurnAdmission.ACCEPT_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ApiError(503, "the gateway is shutting down");
        } catch (ExecutionException | TimeoutException e) {
            LOG.error("cannot publish the cancel of turn {}: {}", turnId, Failures.describe(e));
            throw new ApiError(503, "the cancel could not be sent (Kafka is unavailable); try again");
        }
        return CancelOutcome.CANCELLING;
    }

    /**
     * Published to the control topic unless a decision already stands, then answered with the decision
     * that stands, which is the first one after the executor asked (see {@link ApprovalDecisions}). An
     * ask made before this gateway started is known from {@code llm.item-state} (the call's tool
     * status is {@code awaiting_approval}), so any gateway, started at any time, takes the decision. With
     * {@code remember}, an approval that stands also allows the tool for the rest of the thread: stored on
     * {@code llm.thread-allowances} before the answer (see {@link ThreadAllowances}).
     */
    @Override
    public CompletableFuture<ApprovalDecisions.Decision> decideApproval(String turnId, String callId, boolean approved,
                                                                        String reason, boolean remember, String tenantId) {
        long grace = unknownTurnGrace.toMillis();
        long confirm = ApprovalDecisions.CONFIRM_TIMEOUT.toMillis();
        return views.loaded().copy().orTimeout(grace, TimeUnit.MILLISECONDS).handle((loaded, notYet) -> {
            if (notYet != null) {
                LOG.warn("llm.item-state is not loaded yet; asks made before this gateway started are not known");
            }
            views.awaitingApproval(turnId, callId)
                    .ifPresent(asked -> approvals.askedBefore(turnId, callId, asked.toolName()));
            return approvals.round(turnId, callId);
        }).thenCompose(round -> round.asked.copy().orTimeout(grace, TimeUnit.MILLISECONDS)
                .exceptionallyCompose(notAsked -> CompletableFuture.failedFuture(
                        ApiError.notFound("no tool call " + callId + " of turn " + turnId + " is awaiting approval")))
                .thenCompose(asked -> round.decision.isDone() ? CompletableFuture.completedFuture(null)
                        : producer.control(ControlMessage.approval(turnId, callId, approved, reason, remember))
                                .orTimeout(confirm, TimeUnit.MILLISECONDS)
                                .exceptionallyCompose(failed -> CompletableFuture.failedFuture(unconfirmed(turnId, callId, failed))))
                .thenCompose(published -> round.decision.copy().orTimeout(confirm, TimeUnit.MILLISECONDS)
                        .exceptionallyCompose(failed -> CompletableFuture.failedFuture(unconfirmed(turnId, callId, failed))))
                .thenCompose(decision -> remember && decision.approved()
                        ? allow(turnId, callId, round.toolName(), tenantId, reason).thenApply(stored -> decision)
                        : CompletableFuture.completedFuture(decision)))
                // the caller's error handler sees the ApiError itself, not the stage's wrapper
                .exceptionallyCompose(failed -> CompletableFuture.failedFuture(
                        failed instanceof CompletionException && failed.getCause() != null ? failed.getCause() : failed));
    }

    /**
     * Stores the allowance of an approval that stands with {@code remember}: keyed by the turn's thread and the
     * ask's tool, so the owner of any later turn of the thread approves that tool's asks itself.
     */
    private CompletableFuture<Void> allow(String turnId, String callId, String toolName, String tenantId,
                                          String reason) {
        String threadId = views.snapshot(turnId, registry.status(turnId).orElse(null))
                .map(TurnSnapshot::threadId).orElse(null);
        if (toolName == null || threadId == null) {
            return CompletableFuture.failedFuture(new ApiError(503, "the call is approved, but its tool or thread is "
                    + "not known here yet, so it cannot be remembered; send the decision again"));
        }
        String key = ThreadAllowances.key(tenantId, threadId, toolName);
        ControlMessage allowance = new ControlMessage(ControlMessage.Type.APPROVAL, turnId, reason, callId, true, null,
                toolName, null, true);
        return producer.threadAllowance(key, allowance).orTimeout(ApprovalDecisions.CONFIRM_TIMEOUT.toMillis(),
                TimeUnit.MILLISECONDS).thenRun(() -> {
                    allowances.apply(key, true);
                    LOG.info("tool {} is allowed for the rest of thread {} (call {} of turn {})", toolName, threadId,
                            callId, turnId);
                }).exceptionallyCompose(failed -> CompletableFuture.failedFuture(unremembered(turnId, callId, failed)));
    }

    private static ApiError unremembered(String turnId, String callId, Throwable failure) {
        LOG.error("cannot store the allowance of call {} of turn {}: {}", callId, turnId, Failures.describe(failure));
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause()
                : failure;
        String why = cause instanceof TimeoutException
                ? "Kafka did not acknowledge it within " + ApprovalDecisions.CONFIRM_TIMEOUT.toSeconds() + " s"
                : "Kafka refused it or is unavailable";
        return new ApiError(503, "the call is approved, but the allowance for the thread could not be stored ("
                + why + "); send the decision again");
    }

    private static ApiError unconfirmed(String turnId, String callId, Throwable failure) {
        LOG.error("cannot publish or read back the approval decision on call {} of turn {}: {}", callId, turnId,
                Failures.describe(failure));
        return new ApiError(503, "the decision could not be published or confirmed in time; send it again");
    }

    @Override
    public Optional<TurnStatus> status(String turnId) {
        return registry.status(turnId);
    }

    @Override
    public Optional<TurnSnapshot> snapshot(String turnId) {
        Optional<TurnSnapshot> seen = views.snapshot(turnId, registry.status(turnId).orElse(null));
        return seen.isPresent() ? seen : requested.apply(turnId).flatMap(queued -> views.snapshot(turnId, queued));
    }
}
