package io.turnstream.gateway.api;

import io.turnstream.gateway.loop.ApprovalDecisions;
import java.util.concurrent.CompletableFuture;

/** Takes a person's decisions on tool calls awaiting approval. */
public interface ApprovalDesk {

    /**
     * Publishes the decision unless one already stands, then answers with the decision that stands:
     * the first one after the executor asked. Repeating a request changes nothing. The waits (for the ask,
     * the publish, the decision read back) hold no thread: the answer is a future.
     *
     * @param remember with an approval that stands: allow the call's tool for the rest of the turn's thread
     * @param tenantId the caller's tenant (whose turn it is), null on a gateway without keys
     * @return a future failing with an {@link io.turnstream.gateway.http.ApiError}: 404 when the call is not
     *         awaiting approval, 503 when the decision (or the allowance) cannot be published or is not seen
     *         back in time
     */
    CompletableFuture<ApprovalDecisions.Decision> decideApproval(String turnId, String callId, boolean approved, String reason,
                                                                 boolean remember, String tenantId);
}
