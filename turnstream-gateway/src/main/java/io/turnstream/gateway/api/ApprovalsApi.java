package io.turnstream.gateway.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.turnstream.gateway.http.ApiError;
import io.turnstream.gateway.http.GatewayServer;
import io.turnstream.gateway.http.JsonBody;
import io.turnstream.gateway.security.RequestGuard;
import io.turnstream.model.Json;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code POST /v1/turns/{turnId}/tool-calls/{callId}/approval} with {@code {approved, reason?, remember?}}: a
 * person's decision on a tool call awaiting approval. The decision goes to {@code llm.control}, so
 * any gateway instance accepts it; the tool executor holding the call applies the first decision
 * and ignores later ones, which makes repeating a request harmless. Answers {@code 202} with the
 * decision that stands ({@code approved}, {@code reason}): a repeated or contradicting request gets
 * the first decision back; {@code 404} when the call is not awaiting approval. {@code remember: true} on an
 * approval allows the call's tool for the rest of the turn's thread ({@code 400} on a denial).
 */
public final class ApprovalsApi implements GatewayServer.Routes {

    private final ApprovalDesk desk;

    public ApprovalsApi(ApprovalDesk desk) {
        this.desk = desk;
    }

    @Override
    public void register(RoutesConfig routes) {
        routes.post("/v1/turns/{turnId}/tool-calls/{callId}/approval", this::decide);
    }

    private void decide(Context ctx) {
        String turnId = ctx.pathParam("turnId");
        String callId = JsonBody.requireId("the tool call id", ctx.pathParam("callId"));
        JsonNode body;
        try {
            body = Json.MAPPER.readTree(ctx.body());
        } catch (JsonProcessingException e) {
            throw ApiError.badRequest("the body is not valid JSON: " + e.getOriginalMessage());
        }
        JsonNode approved = body == null ? null : body.get("approved");
        JsonNode reason = body == null ? null : body.get("reason");
        JsonNode remember = body == null ? null : body.get("remember");
        if (approved == null || !approved.isBoolean() || (reason != null && !reason.isNull() && !reason.isTextual())
                || (remember != null && !remember.isNull() && !remember.isBoolean())) {
            throw ApiError.badRequest("the body must be {\"approved\": true|false, \"reason\": \"...\" (optional), "
                    + "\"remember\": true|false (optional)}");
        }
        boolean remembered = remember != null && remember.asBoolean(false);
        if (remembered && !approved.asBoolean()) {
            throw ApiError.badRequest("\"remember\": true allows the tool for the rest of the thread: it goes with "
                    + "\"approved\": true only");
        }
        String why = reason == null || reason.isNull() ? null : reason.asText();
        ctx.future(() -> desk.decideApproval(turnId, callId, approved.asBoolean(), why, remembered,
                RequestGuard.tenant(ctx)).thenAccept(decision -> {
            Map<String, Object> answer = new LinkedHashMap<>();
            answer.put("turnId", turnId);
            answer.put("callId", callId);
            answer.put("approved", decision.approved());
            if (decision.reason() != null) {
                answer.put("reason", decision.reason());
            }
            ctx.status(202).json(answer);
        }));
    }
}
