package io.turnstream.gateway.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.turnstream.gateway.http.ApiError;
import io.turnstream.gateway.http.GatewayServer;
import io.turnstream.gateway.turn.TurnRequest;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.model.Json;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The turns API: {@code POST /v1/turns}, {@code POST /v1/turns/{turnId}/cancel},
 * {@code GET /v1/turns/{turnId}} (a snapshot: status and the current state of every item). Health and metrics
 * are on the gateway's management port.
 */
public final class TurnsApi implements GatewayServer.Routes {

    private final TurnStarts starter;
    private final TurnControl turns;

    public TurnsApi(TurnStarts starter, TurnControl turns) {
        this.starter = starter;
        this.turns = turns;
    }

    @Override
    public void register(RoutesConfig routes) {
        routes.post("/v1/turns", this::start);
        routes.post("/v1/turns/{turnId}/cancel", this::cancel);
        routes.get("/v1/turns/{turnId}", this::status);
    }

    private void start(Context ctx) {
        TurnStatus turn = starter.start(ctx, TurnRequest.parse(ctx.body()));
        Map<String, String> body = new LinkedHashMap<>();
        body.put("turnId", turn.turnId());
        body.put("threadId", turn.threadId());
        body.put("runId", turn.runId());
        ctx.status(202).json(body);
    }

    private void cancel(Context ctx) {
        String turnId = ctx.pathParam("turnId");
        String reason = cancelReason(ctx.body());
        switch (turns.cancel(turnId, reason)) {
            case CANCELLING -> ctx.status(202).json(Map.of("turnId", turnId, "status", "cancelling"));
            case FINISHED -> throw new ApiError(409, "turn " + turnId + " has already finished with status "
                    + turns.status(turnId).map(turn -> turn.status().wire()).orElse("unknown"));
        }
    }

    /** The body is optional; when present it is {@code {"reason": "..."}}. */
    private static String cancelReason(String body) {
        if (body == null || body.isBlank()) {
            return "cancelled by the user";
        }
        JsonNode json;
        try {
            json = Json.MAPPER.readTree(body);
        } catch (JsonProcessingException e) {
            throw ApiError.badRequest("the body is not valid JSON: " + e.getOriginalMessage());
        }
        JsonNode reason = json == null ? null : json.get("reason");
        if (json == null || !json.isObject() || (reason != null && !reason.isTextual())) {
            throw ApiError.badRequest("the body, when given, must be {\"reason\": \"...\"}");
        }
        return reason == null ? "cancelled by the user" : reason.asText();
    }

    private void status(Context ctx) {
        String turnId = ctx.pathParam("turnId");
        ctx.json(turns.snapshot(turnId).orElseThrow(() -> ApiError.notFound("no turn " + turnId + " on this gateway")));
    }
}
