package io.turnstream.gateway.openai;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.turnstream.gateway.api.TurnStarts;
import io.turnstream.gateway.http.ApiError;
import io.turnstream.gateway.http.EventStream;
import io.turnstream.gateway.http.GatewayServer;
import io.turnstream.gateway.provider.Conversation;
import io.turnstream.gateway.security.RequestGuard;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.gateway.view.LiveEncoder;
import io.turnstream.gateway.view.StreamPosition;
import io.turnstream.gateway.view.TurnEventsApi;
import io.turnstream.gateway.view.TurnSnapshot;
import io.turnstream.gateway.view.TurnViews;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiItemType;
import java.io.IOException;
import java.time.Clock;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The OpenAI-compatible API: {@code POST /v1/chat/completions} and {@code POST /v1/responses}, streaming
 * or not, with the gateway's keys and tenants. Each request is a durable turn like {@code POST /v1/turns}:
 * its id comes back in {@code x-turnstream-turn-id} (resume with {@code GET /v1/turns/{turnId}/events}) and
 * its thread in {@code x-turnstream-thread-id}, which a request may send to continue the thread. The
 * executor's tools run inside the turn; tools the request declares are the caller's: the turn stops at a
 * call of one and returns it, and the request that carries its result continues. Answers are built from
 * what every gateway reads from Kafka, so any instance serves any request.
 */
public final class OpenAiApi implements GatewayServer.Routes {

    static final String CHAT_COMPLETIONS = "/v1/chat/completions";
    static final String RESPONSES = "/v1/responses";
    public static final String TURN_ID_HEADER = "x-turnstream-turn-id";
    public static final String THREAD_ID_HEADER = "x-turnstream-thread-id";

    private final TurnStarts starter;
    private final TurnViews views;
    private final Clock clock;

    public OpenAiApi(TurnStarts starter, TurnViews views, Clock clock) {
        this.starter = starter;
        this.views = views;
        this.clock = clock;
    }

    @Override
    public void register(RoutesConfig routes) {
        routes.post(CHAT_COMPLETIONS, this::chatCompletions);
        routes.post(RESPONSES, this::responses);
    }

    private void chatCompletions(Context ctx) throws IOException {
        OpenAiRequest request = OpenAiRequest.chat(ctx.body(), ctx.header(THREAD_ID_HEADER));
        long created = clock.millis() / 1000;
        TurnStatus turn = start(ctx, request);
        if (request.stream()) {
            stream(ctx, turn, new ChatCompletions.Stream(turn.turnId(), request.model(), request.clientToolNames(),
                    created, request.includeUsage()));
            return;
        }
        ctx.future(() -> views.ended(turn.turnId()).thenAccept(snapshot -> {
            TurnAnswer answer = TurnAnswer.of(snapshot, request.clientToolNames());
            if (answer.failed() || answer.cancelled()) {
                int status = answer.cancelled() ? 409 : 502;
                ctx.status(status).json(OpenAiErrors.body(status, answer.problem()));
            } else {
                ctx.json(ChatCompletions.completion(answer, request.model(), created));
            }
        }));
    }

    private void responses(Context ctx) throws IOException {
        OpenAiRequest request = OpenAiRequest.responses(ctx.body(), ctx.header(THREAD_ID_HEADER),
                id -> previousResponse(id, RequestGuard.tenant(ctx)));
        long created = clock.millis() / 1000;
        TurnStatus turn = start(ctx, request);
        if (request.stream()) {
            stream(ctx, turn, new Responses.Stream(turn.turnId(), request.model(), request.previousResponseId(),
                    request.clientToolNames(), created));
            return;
        }
        ctx.future(() -> views.ended(turn.turnId()).thenAccept(snapshot -> ctx.json(Responses.response(
                TurnAnswer.of(snapshot, request.clientToolNames()), request.model(), request.previousResponseId(),
                created))));
    }

    /**
     * The response {@code previous_response_id} names (a turn id), the caller's own: the latest of its thread, so the
     * new turn continues the thread's whole conversation. An unknown response (or another tenant's) is a 404.
     */
    private OpenAiRequest.Previous previousResponse(String responseId, String tenantId) {
        TurnSnapshot previous = views.snapshot(responseId, null)
                .filter(snapshot -> snapshot.turn() != null && snapshot.threadId() != null
                        && (tenantId == null || tenantId.equals(snapshot.turn().tenantId())))
                .orElseThrow(() -> ApiError.notFound("previous_response_id: no response " + responseId));
        List<TurnSnapshot> thread = views.threadTurns(tenantId, previous.threadId());
        if (!thread.isEmpty() && !thread.get(thread.size() - 1).turnId().equals(responseId)) {
            throw ApiError.badRequest("previous_response_id must be the latest response of its thread ("
                    + thread.get(thread.size() - 1).turnId() + "): the gateway keeps one conversation per thread");
        }
        Set<String> answered = previous.items().stream().filter(item -> item.itemType() == UiItemType.TOOL_OUTPUT)
                .map(UIUpsert::callId).collect(Collectors.toSet());
        List<Conversation.ToolCall> unanswered = previous.items().stream()
                .filter(item -> item.itemType() == UiItemType.TOOL_CALL && item.callId() != null
                        && !answered.contains(item.callId()))
                .map(item -> new Conversation.ToolCall(item.callId(), item.toolName(), item.toolArguments()))
                .toList();
        return new OpenAiRequest.Previous(previous.threadId(), unanswered);
    }

    private TurnStatus start(Context ctx, OpenAiRequest request) {
        TurnStatus turn = starter.start(ctx, request.turn());
        ctx.header(TURN_ID_HEADER, turn.turnId());
        ctx.header(THREAD_ID_HEADER, turn.threadId());
        return turn;
    }

    private void stream(Context ctx, TurnStatus turn, LiveEncoder encoder) throws IOException {
        EventStream client = TurnEventsApi.openEventStream(ctx);
        views.subscribe(turn.turnId(), StreamPosition.START, client, encoder);
    }
}
