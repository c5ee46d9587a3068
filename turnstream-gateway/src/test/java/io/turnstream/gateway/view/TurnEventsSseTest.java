package io.turnstream.gateway.view;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.gateway.Gateway;
import io.turnstream.gateway.sse.SseEvent;
import io.turnstream.gateway.sse.SseReader;
import io.turnstream.model.ChangeType;
import io.turnstream.model.ItemAppend;
import io.turnstream.model.Json;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiPayload;
import io.turnstream.model.UiPayloadType;
import io.turnstream.model.UpsertEnvelope;
import io.turnstream.testsupport.UsesBroker;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The gateway's SSE feed of a turn, against upserts written to {@code llm.upserts} and
 * {@code llm.item-state} as the topology writes them (on a real embedded broker), so every seq is
 * under the test's control. The replay buffer is kept small (5) to exercise the fallback to the
 * item-state view.
 */
@UsesBroker
class TurnEventsSseTest {

    private static final int REPLAY_BUFFER = 5;

    private static LiveTopicsGateway live;
    private static Gateway gateway;
    private static final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void startGateway() throws Exception {
        live = LiveTopicsGateway.start(Map.of(TurnViewConfig.PREFIX + "replay-buffer", String.valueOf(REPLAY_BUFFER)));
        gateway = live.gateway();
    }

    @AfterAll
    static void stopGateway() {
        live.close();
    }

    @Test
    void aReconnectWithLastEventIdResumesWithoutGapOrDuplicate() {
        TurnRecords turn = newTurn();
        turn.started();
        turn.message("m1", "Hel", ChangeType.CREATED);
        turn.message("m1", "Hello, wo", ChangeType.UPDATED);
        turn.message("m2", "Second", ChangeType.CREATED);
        awaitLiveFeedAt(turn, 4, 0);

        Stream first = Stream.open(turn.id, null);
        await().until(() -> first.seqs().size() == 4);
        assertThat(first.seqs()).containsExactly(1L, 2L, 3L, 4L);
        assertThat(first.ids()).containsExactly("1.0", "2.0", "3.0", "4.0");
        first.close();

        turn.message("m1", "Hello, world", ChangeType.COMPLETED);
        turn.message("m2", "Second message", ChangeType.COMPLETED);
        Stream resumed = Stream.open(turn.id, "4.0");
        turn.completed();

        await().until(resumed::ended);
        assertThat(resumed.seqs()).containsExactly(5L, 6L, 7L);
        assertThat(resumed.payloads().get(0)).isInstanceOfSatisfying(UIUpsert.class,
                m1 -> assertThat(m1.content()).isEqualTo("Hello, world"));
    }

    @Test
    void aClientThatHasTheWholeFinishedTurnIsToldTheStreamIsOver() throws Exception {
        TurnRecords turn = newTurn();
        turn.started();
        turn.message("m1", "Done.", ChangeType.COMPLETED);
        turn.completed();
        await().until(() -> gateway.commands().snapshot(turn.id).map(s -> s.seq() == 3).orElse(false));

        HttpResponse<String> response = http.send(request(turn.id, "3"), HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).isEqualTo(204);
    }

    @Test
    void aLateJoinerFirstGetsTheCurrentStateFromItemStateThenLiveUpserts() throws Exception {
        TurnRecords turn = newTurn();
        turn.started();
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < 10; i++) {
            text.append("word").append(i).append(' ');
            turn.message("answer", text.toString(), i == 0 ? ChangeType.CREATED : ChangeType.UPDATED);
        }
        turn.reasoning("thinking", "Let me think.", ChangeType.CREATED);
        awaitLiveFeedAt(turn, 12, 0);
        awaitItemStateHolds(turn, 1L, 11L, 12L);

        Stream late = Stream.open(turn.id, null);
        await().until(() -> late.seqs().size() == 3);
        turn.message("answer", text + "end.", ChangeType.COMPLETED);
        turn.completed();

        await().until(late::ended);
        assertThat(late.seqs()).as("turn_started, the answer as it is now, the reasoning; then live")
                .containsExactly(1L, 11L, 12L, 13L, 14L);
        assertThat(late.payloads().get(1)).isInstanceOfSatisfying(UIUpsert.class, answer -> {
            assertThat(answer.version()).isEqualTo(10);
            assertThat(answer.content()).isEqualTo(text.toString());
        });

        JsonNode snapshot = getJson("/v1/turns/" + turn.id);
        assertThat(snapshot.get("status").asText()).isEqualTo("complete");
        assertThat(snapshot.get("seq").asLong()).isEqualTo(14);
        assertThat(snapshot.get("turn").get("type").asText()).isEqualTo(UiPayloadType.TURN_COMPLETED.wire());
        assertThat(snapshot.get("items")).extracting(item -> item.get("itemId").asText())
                .containsExactly("thinking", "answer");
        assertThat(snapshot.get("items").get(1).get("content").asText()).isEqualTo(text + "end.");
    }

    @Test
    void appendsFlowBetweenUpsertsAsAppendEventsWithBothSeqsInTheirIds() {
        TurnRecords turn = newTurn();
        turn.started();
        Stream stream = Stream.open(turn.id, null);
        // one record at a time: the two topics are read by one consumer in no particular order between them
        stream.awaitEvents(1);
        stream.receives(() -> turn.message("m1", "Hel", ChangeType.CREATED), 2);
        stream.receives(() -> turn.append("m1", 3, "lo, wo"), 3);
        stream.receives(() -> turn.append("m1", 9, "rld"), 4);
        stream.receives(() -> turn.message("m1", "Hello, world", ChangeType.COMPLETED), 5);
        turn.completed();

        await().until(stream::ended);
        assertThat(stream.names()).containsExactly("message", "message", "append", "append", "message", "message");
        assertThat(stream.ids()).containsExactly("1.0", "2.0", "2.1", "2.2", "3.2", "4.2");
        assertThat(stream.appends()).extracting(ItemAppend::offset, ItemAppend::text)
                .containsExactly(tuple(3L, "lo, wo"), tuple(9L, "rld"));
        assertThat(stream.shownText("m1")).isEqualTo("Hello, world");
    }

    @Test
    void aReconnectInTheMiddleOfAppendsResumesBothStreamsExactly() {
        TurnRecords turn = newTurn();
        turn.started();
        Stream first = Stream.open(turn.id, null);
        first.awaitEvents(1);
        first.receives(() -> turn.message("m1", "One", ChangeType.CREATED), 2);
        first.receives(() -> turn.append("m1", 3, " two"), 3);
        first.receives(() -> turn.append("m1", 7, " three"), 4);
        assertThat(first.ids()).containsExactly("1.0", "2.0", "2.1", "2.2");
        first.close();

        turn.append("m1", 13, " four");
        Stream resumed = Stream.open(turn.id, "2.1");
        await().until(() -> resumed.ids().size() == 2);
        turn.message("m1", "One two three four", ChangeType.COMPLETED);
        turn.completed();

        await().until(resumed::ended);
        assertThat(resumed.ids()).as("the append it missed, the one after it, then the upserts")
                .containsExactly("2.2", "2.3", "3.3", "4.3");
        assertThat(resumed.appends()).extracting(ItemAppend::text).containsExactly(" three", " four");
    }

    @Test
    void aLateJoinerBeyondTheReplayBufferGetsTheStateThenTheBufferedAppendsItCanApply() {
        TurnRecords turn = newTurn();
        turn.started();
        turn.message("m1", "a", ChangeType.CREATED);
        StringBuilder text = new StringBuilder("a");
        for (int i = 0; i < 2 * REPLAY_BUFFER; i++) {
            turn.append("m1", text.length(), "b");
            text.append('b');
        }
        turn.message("m1", text.toString(), ChangeType.UPDATED);
        turn.append("m1", text.length(), "c");
        awaitLiveFeedAt(turn, 3, 2 * REPLAY_BUFFER + 1);

        Stream late = Stream.open(turn.id, null);
        turn.completed();

        await().until(late::ended);
        assertThat(late.shownText("m1")).isEqualTo(text + "c");
        assertThat(late.appends()).as("only what the replay buffer still holds").hasSizeLessThanOrEqualTo(REPLAY_BUFFER);
    }

    @Test
    void aLateJoinerIsCaughtUpOnceTheItemStateViewHoldsTheItemsThatLeftTheReplayBuffer() {
        TurnRecords turn = newTurn();
        Runnable firstState = firstItemLeftTheReplayBufferBeforeTheItemStateViewHeldIt(turn);

        Stream late = Stream.open(turn.id, null);
        await().until(() -> gateway.views().openSubscriptions(turn.id) == 1);
        turn.message("second", "The second answer.", ChangeType.COMPLETED);
        awaitLiveFeedAt(turn, 8, 0);
        assertThat(late.ids()).as("no catch-up without the first item").isEmpty();

        firstState.run();
        turn.completed();

        await().until(late::ended);
        assertThat(late.ids()).as("turn_started, the first item, the second's latest upsert, the end; each once")
                .containsExactly("1.0", "2.0", "8.0", "9.0");
        assertThat(late.payloads().get(1)).isInstanceOfSatisfying(UIUpsert.class,
                first -> assertThat(first.content()).isEqualTo("The first answer."));
    }

    @Test
    void aReconnectWhoseMissedItemsLeftTheReplayBufferGetsThemOnceTheItemStateViewHoldsThem() {
        TurnRecords turn = newTurn();
        Runnable firstState = firstItemLeftTheReplayBufferBeforeTheItemStateViewHeldIt(turn);

        Stream resumed = Stream.open(turn.id, "1.0");
        await().until(() -> gateway.views().openSubscriptions(turn.id) == 1);
        firstState.run();
        turn.completed();

        await().until(resumed::ended);
        assertThat(resumed.ids()).as("the first item it missed, the second as it is now, then live")
                .containsExactly("2.0", "7.0", "8.0");
    }

    @Test
    void aBadLastEventIdIsRefusedWithAMessage() throws Exception {
        TurnRecords turn = newTurn();
        turn.started();
        await().until(() -> gateway.commands().snapshot(turn.id).isPresent());

        HttpResponse<String> response = http.send(request(turn.id, "seven"), HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.body()).contains("Last-Event-ID must be the id of the last event received");
    }

    private static TurnRecords newTurn() {
        return live.newTurn("thread-1");
    }

    /**
     * Writes turn_started (seq 1), a first item (2) whose item-state record is held back, and a second item's
     * {@value #REPLAY_BUFFER} upserts (3-7), and waits until the live feed has read them (its buffer holds 3-7) and the
     * item-state view holds 1 and 7, not the first item: as when that view lags. Running what it returns writes the
     * first item's item-state record.
     */
    private static Runnable firstItemLeftTheReplayBufferBeforeTheItemStateViewHeldIt(TurnRecords turn) {
        turn.started();
        Runnable firstState = turn.messageHoldingItsState("first", "The first answer.", ChangeType.COMPLETED);
        for (int i = 0; i < REPLAY_BUFFER; i++) {
            turn.message("second", "The second " + i, i == 0 ? ChangeType.CREATED : ChangeType.UPDATED);
        }
        awaitLiveFeedAt(turn, 2 + REPLAY_BUFFER, 0);
        awaitItemStateHolds(turn, 1L, 2L + REPLAY_BUFFER);
        return firstState;
    }

    /**
     * Waits until the gateway's live feed has read the turn this far. Its item-state view reads on its own and may be
     * ahead: a client that joined before the feed had read this far would be served from that view instead of the
     * replay buffer, which is right, but not the path the test means.
     */
    private static void awaitLiveFeedAt(TurnRecords turn, long upsertSeq, long appendSeq) {
        await().until(() -> gateway.views().liveSeen(turn.id).equals(new StreamPosition(upsertSeq, appendSeq)));
    }

    /**
     * Waits until the gateway's item-state view holds the turn as these seqs (the latest upsert of each item and of its
     * lifecycle). It reads on its own and may lag the live feed: a client that joins beyond the replay buffer is caught
     * up from it, and before it held the turn's lifecycle event would be handed the buffered items only.
     */
    private static void awaitItemStateHolds(TurnRecords turn, Long... seqs) {
        await().until(() -> gateway.views().stateHeld(turn.id).equals(List.of(seqs)));
    }

    private static JsonNode getJson(String path) throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(gateway.baseUrl() + path)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        return Json.MAPPER.readTree(response.body());
    }

    private static HttpRequest request(String turnId, String lastEventId) {
        HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create(gateway.baseUrl() + "/v1/turns/" + turnId + "/events"));
        if (lastEventId != null) {
            builder.header("Last-Event-ID", lastEventId);
        }
        return builder.build();
    }

    /** One SSE connection, read on its own thread: the events' names, ids and records as they arrive. */
    private static final class Stream {
        private final List<String> names = new CopyOnWriteArrayList<>();
        private final List<String> ids = new CopyOnWriteArrayList<>();
        private final List<Object> records = new CopyOnWriteArrayList<>();
        private final InputStream body;
        private volatile boolean ended;

        private Stream(InputStream body) {
            this.body = body;
            Thread reader = new Thread(this::read, "sse-test-reader");
            reader.setDaemon(true);
            reader.start();
        }

        static Stream open(String turnId, String lastEventId) {
            try {
                HttpResponse<InputStream> response = http.send(request(turnId, lastEventId),
                        HttpResponse.BodyHandlers.ofInputStream());
                assertThat(response.statusCode()).isEqualTo(200);
                assertThat(response.headers().firstValue("content-type")).hasValueSatisfying(
                        type -> assertThat(type).startsWith("text/event-stream"));
                return new Stream(response.body());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }

        private void read() {
            SseReader reader = new SseReader(body);
            try {
                for (SseEvent event = reader.next(); event != null; event = reader.next()) {
                    String name = event.event() == null ? "message" : event.event();
                    records.add(name.equals("append") ? Json.fromString(event.data(), ItemAppend.class)
                            : Json.fromString(event.data(), UpsertEnvelope.class));
                    names.add(name);
                    ids.add(reader.lastEventId());
                }
            } catch (IOException closed) {
                // the test closed the connection
            }
            ended = true;
        }

        private List<UpsertEnvelope> envelopes() {
            return records.stream().filter(UpsertEnvelope.class::isInstance).map(UpsertEnvelope.class::cast).toList();
        }

        List<Long> seqs() {
            return envelopes().stream().map(UpsertEnvelope::seq).toList();
        }

        List<String> ids() {
            return List.copyOf(ids);
        }

        List<String> names() {
            return List.copyOf(names);
        }

        List<ItemAppend> appends() {
            return records.stream().filter(ItemAppend.class::isInstance).map(ItemAppend.class::cast).toList();
        }

        List<UiPayload> payloads() {
            return envelopes().stream().map(UpsertEnvelope::payload).toList();
        }

        /**
         * An item's text as a client following the append rule shows it: the latest upsert's content,
         * extended by each append whose offset is the shown length.
         */
        String shownText(String itemId) {
            String shown = "";
            for (Object record : records) {
                if (record instanceof UpsertEnvelope envelope && envelope.payload() instanceof UIUpsert item
                        && item.itemId().equals(itemId)) {
                    shown = item.content();
                } else if (record instanceof ItemAppend append && append.itemId().equals(itemId)
                        && append.offset() == shown.codePointCount(0, shown.length())) {
                    shown += append.text();
                }
            }
            return shown;
        }

        /** Writes a record, then waits until this stream has received {@code count} events. */
        void receives(Runnable write, int count) {
            write.run();
            awaitEvents(count);
        }

        void awaitEvents(int count) {
            await().until(() -> ids.size() == count);
        }

        boolean ended() {
            return ended;
        }

        void close() {
            try {
                body.close();
            } catch (IOException ignored) {
                // already closed
            }
        }
    }

    static {
        // keep SSE waits short: a connection that never delivers fails the test within this bound
        org.awaitility.Awaitility.setDefaultTimeout(Duration.ofSeconds(30));
    }
}
