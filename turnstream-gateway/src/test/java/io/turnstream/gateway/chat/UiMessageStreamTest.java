package io.turnstream.gateway.chat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.gateway.Gateway;
import io.turnstream.gateway.sse.SseEvent;
import io.turnstream.gateway.sse.SseReader;
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.gateway.view.LiveTopicsGateway;
import io.turnstream.gateway.view.TurnRecords;
import io.turnstream.model.ChangeType;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.Json;
import io.turnstream.model.ToolState;
import io.turnstream.model.UiItemType;
import io.turnstream.testsupport.UsesBroker;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The UI message stream of a turn whose upserts and appends the test writes itself (on a real embedded
 * broker), read through {@code GET /api/chat/{chatId}/stream}: the exact chunks for appends, gaps,
 * tool outcomes and a failed turn. The whole pipeline with the AI SDK's own client is
 * {@link AiSdkChatTest}.
 */
@UsesBroker
class UiMessageStreamTest {

    private static LiveTopicsGateway live;
    private static Gateway gateway;
    private static final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void startGateway() throws Exception {
        live = LiveTopicsGateway.start(Map.of());
        gateway = live.gateway();
    }

    @AfterAll
    static void stopGateway() {
        live.close();
    }

    @Test
    void textGrowsByTheAppendsAndEachStepIsFramed() {
        TurnRecords turn = runningTurn();
        Chunks chunks = Chunks.resume(turn.threadId);
        chunks.receive(() -> turn.reasoning("r-s1-0", "Hm", ChangeType.CREATED), 4);
        chunks.receive(() -> turn.append("r-s1-0", 2, "m, ok"), 5);
        chunks.receive(() -> turn.reasoning("r-s1-0", "Hmm, ok", ChangeType.COMPLETED), 6);
        chunks.receive(() -> turn.message("r-s1-1", "Hel", ChangeType.CREATED), 8);
        chunks.receive(() -> turn.append("r-s1-1", 0, "Hello"), 9);
        chunks.receive(() -> turn.append("r-s1-1", 5, ", world"), 10);
        chunks.receive(() -> turn.message("r-s1-1", "Hello, world", ChangeType.COMPLETED), 11);
        chunks.receive(() -> turn.message("r-s2-0", "Bye", ChangeType.COMPLETED), 16);
        turn.completed();

        await().until(chunks::ended);
        assertThat(chunks.lines()).containsExactly(
                "{\"type\":\"start\",\"messageId\":\"" + turn.id + "\",\"messageMetadata\":{\"turnId\":\"" + turn.id + "\"}}",
                "{\"type\":\"start-step\"}",
                "{\"type\":\"reasoning-start\",\"id\":\"r-s1-0\"}",
                "{\"type\":\"reasoning-delta\",\"id\":\"r-s1-0\",\"delta\":\"Hm\"}",
                "{\"type\":\"reasoning-delta\",\"id\":\"r-s1-0\",\"delta\":\"m, ok\"}",
                "{\"type\":\"reasoning-end\",\"id\":\"r-s1-0\"}",
                "{\"type\":\"text-start\",\"id\":\"r-s1-1\"}",
                "{\"type\":\"text-delta\",\"id\":\"r-s1-1\",\"delta\":\"Hel\"}",
                "{\"type\":\"text-delta\",\"id\":\"r-s1-1\",\"delta\":\"lo\"}",
                "{\"type\":\"text-delta\",\"id\":\"r-s1-1\",\"delta\":\", world\"}",
                "{\"type\":\"text-end\",\"id\":\"r-s1-1\"}",
                "{\"type\":\"finish-step\"}",
                "{\"type\":\"start-step\"}",
                "{\"type\":\"text-start\",\"id\":\"r-s2-0\"}",
                "{\"type\":\"text-delta\",\"id\":\"r-s2-0\",\"delta\":\"Bye\"}",
                "{\"type\":\"text-end\",\"id\":\"r-s2-0\"}",
                "{\"type\":\"finish-step\"}",
                "{\"type\":\"finish\",\"finishReason\":\"stop\",\"messageMetadata\":{\"turnId\":\"" + turn.id
                        + "\",\"status\":\"complete\",\"usage\":{\"promptTokens\":1,\"completionTokens\":2,\"totalTokens\":3}}}",
                "[DONE]");
    }

    @Test
    void aCompactionSummaryIsADataPartNotAssistantText() {
        TurnRecords turn = runningTurn();
        Chunks chunks = Chunks.resume(turn.threadId);
        chunks.receive(() -> turn.compactionSummary("r-s3-compaction-1", "The user asked for a fix."), 2);
        turn.completed();

        await().until(chunks::ended);
        assertThat(chunks.lines()).contains(
                "{\"type\":\"data-compaction\",\"id\":\"r-s3-compaction-1\",\"data\":{\"summary\":\"The user asked for a fix.\"}}");
        assertThat(chunks.deltas()).isEmpty();
    }

    @Test
    void anAppendAfterAGapWaitsForTheNextUpsert() {
        TurnRecords turn = runningTurn();
        Chunks chunks = Chunks.resume(turn.threadId);
        chunks.receive(() -> turn.message("m-s1-0", "One", ChangeType.CREATED), 4);
        turn.append("m-s1-0", 7, " three");
        // read before the upsert that fills the gap, or it is no append after a gap
        live.awaitLiveFeedRead(turn);
        chunks.receive(() -> turn.message("m-s1-0", "One two", ChangeType.UPDATED), 5);
        chunks.receive(() -> turn.append("m-s1-0", 7, " three"), 6);
        turn.completed();

        await().until(chunks::ended);
        assertThat(chunks.deltas()).as("the text after the gap comes with the upsert; then appends go on")
                .containsExactly("One", " two", " three");
    }

    @Test
    void toolOutcomesAndAFailedTurnEndTheMessageWithAnErrorAndWhatItUsed() {
        TurnRecords turn = runningTurn();
        Chunks chunks = Chunks.resume(turn.threadId);
        chunks.receive(() -> turn.toolCall("c-s1-0", "call-1", "read_file", "{\"path\":\"missing.md\"}"), 5);
        chunks.receive(() -> turn.toolOutput("c-s1-out0", "call-1", "read_file", "no such file: missing.md", false), 6);
        turn.failed("STREAM_STALLED", "the provider sent nothing for 30 s");

        await().until(chunks::ended);
        assertThat(chunks.lines()).as("a call seen only when complete still opens and streams its input").containsSubsequence(
                "{\"type\":\"tool-input-start\",\"toolCallId\":\"call-1\",\"toolName\":\"read_file\"}",
                "{\"type\":\"tool-input-delta\",\"toolCallId\":\"call-1\",\"inputTextDelta\":\"{\\\"path\\\":\\\"missing.md\\\"}\"}",
                "{\"type\":\"tool-input-available\",\"toolCallId\":\"call-1\",\"toolName\":\"read_file\","
                        + "\"input\":{\"path\":\"missing.md\"}}",
                "{\"type\":\"tool-output-error\",\"toolCallId\":\"call-1\",\"errorText\":\"no such file: missing.md\"}",
                "{\"type\":\"finish-step\"}",
                "{\"type\":\"error\",\"errorText\":\"STREAM_STALLED: the provider sent nothing for 30 s\"}",
                "{\"type\":\"finish\",\"finishReason\":\"error\",\"messageMetadata\":{\"turnId\":\"" + turn.id
                        + "\",\"usage\":{\"promptTokens\":1,\"completionTokens\":2,\"totalTokens\":3},"
                        + "\"failedAttemptsUsage\":{\"promptTokens\":4,\"completionTokens\":0,\"totalTokens\":4}}}");
        assertThat(chunks.lines()).last().isEqualTo("[DONE]");
    }

    @Test
    void aToolCallsInputStreamsFromItsPendingStatusAndArgumentAppendsAndItsApprovalIsADataPart() {
        TurnRecords turn = runningTurn();
        Chunks chunks = Chunks.resume(turn.threadId);
        turn.append("t-s1-0", 0, "{\"path\":");
        chunks.receive(() -> turn.toolStatus("t-s1-0", "call-7", "write_file", ToolState.PENDING, null), 5);
        chunks.receive(() -> turn.append("t-s1-0", 8, "\"a.md\"}"), 6);
        chunks.receive(() -> turn.toolCall("t-s1-0", "call-7", "write_file", "{\"path\":\"a.md\"}"), 7);
        chunks.receive(() -> turn.append("t-s1-0", 0, "{\"path\":\"a.md\"}"), 7);
        chunks.receive(() -> turn.toolStatus("t-s1-0", "call-7", "write_file", ToolState.AWAITING_APPROVAL, null), 9);
        chunks.receive(() -> turn.toolStatus("t-s1-0", "call-7", "write_file", ToolState.RUNNING, null), 11);
        chunks.receive(() -> turn.toolOutput("t-s1-out0", "call-7", "write_file", "wrote a.md", true), 12);
        turn.completed();

        await().until(chunks::ended);
        List<String> lines = chunks.lines();
        assertThat(lines.subList(0, 3)).containsExactly(
                "{\"type\":\"start\",\"messageId\":\"" + turn.id + "\",\"messageMetadata\":{\"turnId\":\"" + turn.id + "\"}}",
                "{\"type\":\"start-step\"}",
                "{\"type\":\"tool-input-start\",\"toolCallId\":\"call-7\",\"toolName\":\"write_file\"}");
        assertThat(lines.subList(3, 5)).as("the append written before the status is held for it: either order")
                .containsExactlyInAnyOrder(
                        "{\"type\":\"tool-input-delta\",\"toolCallId\":\"call-7\",\"inputTextDelta\":\"{\\\"path\\\":\"}",
                        dataPart("data-tool-status", "call-7", "pending", "t-s1-0", turn));
        assertThat(lines.subList(5, lines.size())).containsExactly(
                "{\"type\":\"tool-input-delta\",\"toolCallId\":\"call-7\",\"inputTextDelta\":\"\\\"a.md\\\"}\"}",
                "{\"type\":\"tool-input-available\",\"toolCallId\":\"call-7\",\"toolName\":\"write_file\","
                        + "\"input\":{\"path\":\"a.md\"}}",
                dataPart("data-tool-status", "call-7", "awaiting_approval", "t-s1-0", turn),
                "{\"type\":\"data-approval\",\"id\":\"call-7\",\"data\":{\"turnId\":\"" + turn.id
                        + "\",\"callId\":\"call-7\",\"toolName\":\"write_file\",\"state\":\"requested\"}}",
                dataPart("data-tool-status", "call-7", "running", "t-s1-0", turn),
                "{\"type\":\"data-approval\",\"id\":\"call-7\",\"data\":{\"turnId\":\"" + turn.id
                        + "\",\"callId\":\"call-7\",\"toolName\":\"write_file\",\"state\":\"approved\"}}",
                "{\"type\":\"tool-output-available\",\"toolCallId\":\"call-7\",\"output\":\"wrote a.md\"}",
                "{\"type\":\"finish-step\"}",
                "{\"type\":\"finish\",\"finishReason\":\"stop\",\"messageMetadata\":{\"turnId\":\"" + turn.id
                        + "\",\"status\":\"complete\",\"usage\":{\"promptTokens\":1,\"completionTokens\":2,\"totalTokens\":3}}}",
                "[DONE]");
    }

    @Test
    void aDeniedCallsApprovalPartSaysSoAndTurnStatusesAreDataParts() {
        TurnRecords turn = runningTurn();
        Chunks chunks = Chunks.resume(turn.threadId);
        chunks.receive(() -> turn.toolStatus("d-s1-0", "call-9", "write_file", ToolState.AWAITING_APPROVAL, null), 3);
        chunks.receive(() -> turn.toolStatus("d-s1-0", "call-9", "write_file", ToolState.ERROR,
                ErrorInfo.of("DENIED", "Not executed: the call was denied")), 5);
        turn.completed();

        await().until(chunks::ended);
        assertThat(chunks.json()).filteredOn(chunk -> chunk.get("type").asText().equals("data-approval"))
                .extracting(chunk -> chunk.at("/data/state").asText()).containsExactly("requested", "denied");
        assertThat(chunks.json()).filteredOn(chunk -> chunk.get("type").asText().equals("data-tool-status"))
                .extracting(chunk -> chunk.at("/data/status").asText() + " " + chunk.at("/data/error/code").asText())
                .containsExactly("awaiting_approval ", "error DENIED");
    }

    @Test
    void aWithdrawnItemEndsItsPartAndIsNamedInADataWithdrawnPart() {
        TurnRecords turn = runningTurn();
        Chunks chunks = Chunks.resume(turn.threadId);
        chunks.receive(() -> turn.message("w-s1-0", "Let me write", ChangeType.CREATED), 4);
        chunks.receive(() -> turn.withdrawn("w-s1-0", UiItemType.MESSAGE), 6);
        chunks.receive(() -> turn.message("w-s1-1", "Written.", ChangeType.COMPLETED), 9);
        turn.completed();

        await().until(chunks::ended);
        assertThat(chunks.lines()).containsSubsequence(
                "{\"type\":\"text-start\",\"id\":\"w-s1-0\"}",
                "{\"type\":\"text-delta\",\"id\":\"w-s1-0\",\"delta\":\"Let me write\"}",
                "{\"type\":\"text-end\",\"id\":\"w-s1-0\"}",
                "{\"type\":\"data-withdrawn\",\"data\":{\"itemIds\":[\"w-s1-0\"]}}",
                "{\"type\":\"text-start\",\"id\":\"w-s1-1\"}",
                "{\"type\":\"text-delta\",\"id\":\"w-s1-1\",\"delta\":\"Written.\"}");
    }

    @Test
    void aChatWhoseTurnHasFinishedHasNothingToResume() throws Exception {
        TurnRecords turn = runningTurn();
        turn.completed();
        await().until(() -> gateway.commands().snapshot(turn.id).map(s -> s.status() == TurnPhase.COMPLETE).orElse(false));

        assertThat(Chunks.get(turn.threadId).statusCode()).isEqualTo(204);
    }

    /** A {@code data-*} part holding a tool call's {@code UIStatus} as it is on {@code llm.upserts}. */
    private static String dataPart(String type, String callId, String status, String itemId, TurnRecords turn) {
        return "{\"type\":\"" + type + "\",\"id\":\"" + callId + "\",\"data\":{\"type\":\"tool_status\",\"turnId\":\""
                + turn.id + "\",\"threadId\":\"" + turn.threadId + "\",\"status\":\"" + status + "\",\"itemId\":\"" + itemId
                + "\",\"callId\":\"" + callId + "\",\"toolName\":\"write_file\"}}";
    }

    /** A turn that has started, as the gateway's views know it. */
    private static TurnRecords runningTurn() {
        TurnRecords turn = live.newTurn("chat-" + UUID.randomUUID());
        turn.started();
        await().until(() -> gateway.views().runningTurnOf(turn.threadId, null).isPresent());
        return turn;
    }

    /** One UI message stream, read on its own thread: the {@code data} of each event. */
    private static final class Chunks {
        private final List<String> lines = new CopyOnWriteArrayList<>();
        private volatile boolean ended;

        static HttpResponse<InputStream> get(String chatId) throws IOException, InterruptedException {
            return http.send(HttpRequest.newBuilder(URI.create(gateway.baseUrl() + "/api/chat/" + chatId + "/stream"))
                    .build(), HttpResponse.BodyHandlers.ofInputStream());
        }

        static Chunks resume(String chatId) {
            try {
                HttpResponse<InputStream> response = get(chatId);
                assertThat(response.statusCode()).isEqualTo(200);
                assertThat(response.headers().firstValue("x-vercel-ai-ui-message-stream")).hasValue("v1");
                Chunks chunks = new Chunks();
                Thread reader = new Thread(() -> chunks.read(response.body()), "ui-stream-test-reader");
                reader.setDaemon(true);
                reader.start();
                return chunks;
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }

        private void read(InputStream body) {
            SseReader reader = new SseReader(body);
            try {
                for (SseEvent event = reader.next(); event != null; event = reader.next()) {
                    lines.add(event.data());
                }
            } catch (IOException closed) {
                // the stream ended
            }
            ended = true;
        }

        /** Writes a record, then waits until {@code count} chunks have arrived. */
        void receive(Runnable write, int count) {
            write.run();
            await().untilAsserted(() -> assertThat(lines).hasSize(count));
        }

        List<String> lines() {
            return List.copyOf(lines);
        }

        List<JsonNode> json() {
            return lines.stream().filter(line -> line.startsWith("{")).map(line -> Json.fromString(line, JsonNode.class))
                    .toList();
        }

        List<String> deltas() {
            return json().stream().filter(chunk -> chunk.get("type").asText().endsWith("-delta"))
                    .map(chunk -> chunk.get("delta").asText()).toList();
        }

        boolean ended() {
            return ended;
        }
    }
}
