package io.turnstream.gateway.view;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.gateway.Gateway;
import io.turnstream.gateway.ProviderEndpoints;
import io.turnstream.gateway.sse.SseEvent;
import io.turnstream.gateway.sse.SseReader;
import io.turnstream.model.Json;
import io.turnstream.model.Topics;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiPayload;
import io.turnstream.model.UpsertEnvelope;
import io.turnstream.runtime.EmbeddedKafkaBroker;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.TopicAdmin;
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
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The gateway's SSE feed of a turn, against upserts written to {@code llm.upserts} and
 * {@code llm.item-state} as the topology writes them (on a real embedded broker), so every seq is
 * under the test's control. The replay buffer is kept small (5) to exercise the fallback to the
 * item-state view.
 */
class TurnEventsSseTest {

    private static final int REPLAY_BUFFER = 5;

    private static EmbeddedKafkaBroker broker;
    private static Gateway gateway;
    private static KafkaProducer<String, String> producer;
    private static final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void startGateway() throws Exception {
        broker = EmbeddedKafkaBroker.onFreePort().start();
        Properties props = new Properties();
        props.put("bootstrap.servers", broker.bootstrapServers());
        TopicAdmin.createAll(props, Topics.DEFAULTS, 3, (short) 1);
        props.put("turnstream.gateway.port", "0");
        props.put(TurnViewConfig.PREFIX + "replay-buffer", String.valueOf(REPLAY_BUFFER));
        gateway = Gateway.start(Settings.of(props), ProviderEndpoints.simulatedOnly(null), List.of());
        gateway.views().loaded().get();
        producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()),
                new StringSerializer(), new StringSerializer());
    }

    @AfterAll
    static void stopGateway() {
        producer.close();
        gateway.close();
        broker.close();
    }

    @Test
    void aReconnectWithLastEventIdResumesWithoutGapOrDuplicate() {
        Turn turn = new Turn();
        turn.started();
        turn.message("m1", "Hel", "created");
        turn.message("m1", "Hello, wo", "updated");
        turn.message("m2", "Second", "created");

        Stream first = Stream.open(turn.id, null);
        await().until(() -> first.seqs().size() == 4);
        assertThat(first.seqs()).containsExactly(1L, 2L, 3L, 4L);
        assertThat(first.ids()).containsExactly("1", "2", "3", "4");
        first.close();

        turn.message("m1", "Hello, world", "completed");
        turn.message("m2", "Second message", "completed");
        Stream resumed = Stream.open(turn.id, "4");
        turn.completed();

        await().until(resumed::ended);
        assertThat(resumed.seqs()).containsExactly(5L, 6L, 7L);
        assertThat(resumed.payloads().get(0)).isInstanceOfSatisfying(UIUpsert.class,
                m1 -> assertThat(m1.content()).isEqualTo("Hello, world"));
    }

    @Test
    void aClientThatHasTheWholeFinishedTurnIsToldTheStreamIsOver() throws Exception {
        Turn turn = new Turn();
        turn.started();
        turn.message("m1", "Done.", "completed");
        turn.completed();
        await().until(() -> gateway.snapshot(turn.id).map(s -> s.seq() == 3).orElse(false));

        HttpResponse<String> response = http.send(request(turn.id, "3"), HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).isEqualTo(204);
    }

    @Test
    void aLateJoinerFirstGetsTheCurrentStateFromItemStateThenLiveUpserts() throws Exception {
        Turn turn = new Turn();
        turn.started();
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < 10; i++) {
            text.append("word").append(i).append(' ');
            turn.message("answer", text.toString(), i == 0 ? "created" : "updated");
        }
        turn.reasoning("thinking", "Let me think.");
        await().until(() -> gateway.snapshot(turn.id).map(s -> s.seq() == 12).orElse(false));

        Stream late = Stream.open(turn.id, null);
        await().until(() -> late.seqs().size() == 3);
        turn.message("answer", text + "end.", "completed");
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
        assertThat(snapshot.get("turn").get("type").asText()).isEqualTo(UITurnEvent.TURN_COMPLETED);
        assertThat(snapshot.get("items")).extracting(item -> item.get("itemId").asText())
                .containsExactly("thinking", "answer");
        assertThat(snapshot.get("items").get(1).get("content").asText()).isEqualTo(text + "end.");
    }

    @Test
    void aBadLastEventIdIsRefusedWithAMessage() throws Exception {
        Turn turn = new Turn();
        turn.started();
        await().until(() -> gateway.snapshot(turn.id).isPresent());

        HttpResponse<String> response = http.send(request(turn.id, "seven"), HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.body()).contains("Last-Event-ID must be the seq");
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

    /** A turn's upserts, written to llm.upserts and llm.item-state as the topology writes them. */
    private static final class Turn {
        final String id = "turn-" + UUID.randomUUID();
        private final Map<String, Long> versions = new java.util.HashMap<>();
        private long seq;

        void started() {
            publish(new UITurnEvent(UITurnEvent.TURN_STARTED, id, "thread-1", "model", "simulated", null, null, null), "turn");
        }

        void completed() {
            publish(new UITurnEvent(UITurnEvent.TURN_COMPLETED, id, "thread-1", "model", "simulated", "complete",
                    new UITurnEvent.Usage(1, 2, 3), null), "turn");
        }

        void message(String itemId, String content, String changeType) {
            item(itemId, "message", content, changeType);
        }

        void reasoning(String itemId, String content) {
            item(itemId, "reasoning", content, "created");
        }

        private void item(String itemId, String type, String content, String changeType) {
            long version = versions.merge(itemId, 1L, Long::sum);
            publish(new UIUpsert(UIUpsert.TYPE, id, "thread-1", itemId, type, changeType, version, content, "agent",
                    null, null, null, null, null, null, null, null), itemId);
        }

        private void publish(UiPayload payload, String stateKey) {
            seq++;
            String type = payload instanceof UIUpsert ? UpsertEnvelope.ITEM_UPSERT : UpsertEnvelope.TURN_EVENT;
            String json = Json.toString(new UpsertEnvelope(UUID.randomUUID().toString(), System.currentTimeMillis(), id,
                    seq, type, payload));
            producer.send(new ProducerRecord<>(Topics.DEFAULTS.upserts(), id, json));
            producer.send(new ProducerRecord<>(Topics.DEFAULTS.itemState(), id + "/" + stateKey, json));
            producer.flush();
        }
    }

    /** One SSE connection, read on its own thread: the events' ids and envelopes as they arrive. */
    private static final class Stream {
        private final List<String> ids = new CopyOnWriteArrayList<>();
        private final List<UpsertEnvelope> envelopes = new CopyOnWriteArrayList<>();
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
                    envelopes.add(Json.fromString(event.data(), UpsertEnvelope.class));
                    ids.add(reader.lastEventId());
                }
            } catch (IOException closed) {
                // the test closed the connection
            }
            ended = true;
        }

        List<Long> seqs() {
            return envelopes.stream().map(UpsertEnvelope::seq).toList();
        }

        List<String> ids() {
            return List.copyOf(ids);
        }

        List<UiPayload> payloads() {
            return envelopes.stream().map(UpsertEnvelope::payload).toList();
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
