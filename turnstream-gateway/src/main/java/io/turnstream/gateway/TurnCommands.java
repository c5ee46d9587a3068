package io.turnstream.gateway;

import io.turnstream.gateway.api.ApprovalDesk;
import io.turnstream.gateway.api.TurnControl;
import io.turnstream.gateway.http.ApiError;
import io.turnstream.gateway.loop.ApprovalDecisions;
import io.turnstream.gateway.loop.TurnRegistry;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.gateway.view.TurnSnapshot;
import io.turnstream.gateway.view.TurnViews;
import io.turnstream.model.ControlMessage;
import io.turnstream.runtime.Failures;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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
    private final GatewayProducer producer;
    private final TurnViews views;
    private final Duration unknownTurnGrace;

    TurnCommands(TurnRegistry registry, ApprovalDecisions approvals, GatewayProducer producer, TurnViews views,
                 Duration unknownTurnGrace) {
        this.registry = registry;
        this.approvals = approvals;
        this.producer = producer;
        this.views = views;
        this.unknownTurnGrace = unknownTurnGrace;
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
     * status is {@code awaiting_approval}), so any gateway, started at any time, takes the decision.
     */
    @Override
    public ApprovalDecisions.Decision decideApproval(String turnId, String callId, boolean approved, String reason) {
        try {
            views.loaded().get(unknownTurnGrace.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
            LOG.warn("llm.item-state is not loaded yet; asks made before this gateway started are not known");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ApiError(503, "interrupted while reading the pending approvals");
        }
        if (views.awaitingApproval(turnId, callId)) {
            approvals.askedBefore(turnId, callId);
        }
        ApprovalDecisions.Round round = approvals.round(turnId, callId);
        try {
            try {
                round.asked.get(unknownTurnGrace.toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                throw ApiError.notFound("no tool call " + callId + " of turn " + turnId + " is awaiting approval");
            }
            if (!round.decision.isDone()) {
                producer.control(ControlMessage.approval(turnId, callId, approved, reason))
                        .get(ApprovalDecisions.CONFIRM_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            }
            return round.decision.get(ApprovalDecisions.CONFIRM_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ApiError(503, "interrupted while publishing the decision");
        } catch (ExecutionException | TimeoutException e) {
            LOG.error("cannot publish the approval decision on call {} of turn {}: {}", callId, turnId, e.getMessage());
            throw new ApiError(503, "the decision could not be published or confirmed in time; send it again");
        }
    }

    @Override
    public Optional<TurnStatus> status(String turnId) {
        return registry.status(turnId);
    }

    @Override
    public Optional<TurnSnapshot> snapshot(String turnId) {
        return views.snapshot(turnId, registry.status(turnId).orElse(null));
    }
}
