package io.turnstream.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.model.Json;
import io.turnstream.model.Topics;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UiPayloadType;
import io.turnstream.model.UpsertEnvelope;
import io.turnstream.runtime.EmbeddedKafkaBroker;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.TopicAdmin;
import io.turnstream.testsupport.UsesBroker;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

/**
 * The gateway's health on its management port follows its Kafka clients: up with the cluster, down without it; and a
 * gateway starts serving only once it holds what {@code llm.item-state} held.
 */
@UsesBroker
class GatewayHealthTest {

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void healthIsDownWhenTheGatewayLosesKafka() throws Exception {
        EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.onFreePort().start();
        Properties settings = new Properties();
        settings.put("bootstrap.servers", broker.bootstrapServers());
        TopicAdmin.createAll(settings, Topics.DEFAULTS, 1, (short) 1);
        settings.put("turnstream.gateway.port", "0");
        settings.put("reconnect.backoff.max.ms", "500");
        try (Gateway gateway = Gateway.start(Settings.of(settings), ProviderEndpoints.simulatedOnly(null), List.of())) {
            await().atMost(Duration.ofSeconds(30)).until(() -> health(gateway).statusCode() == 200);
            assertThat(Json.fromString(health(gateway).body(), JsonNode.class).at("/kafka/views").asText()).isEqualTo("UP");

            broker.close();

            await().atMost(Duration.ofSeconds(60)).until(() -> health(gateway).statusCode() == 503);
            JsonNode body = Json.fromString(health(gateway).body(), JsonNode.class);
            assertThat(body.get("status").asText()).isEqualTo("DOWN");
            assertThat(body.at("/kafka/inbox").asText()).isEqualTo("DOWN");
        }
    }

    /**
     * A restarted gateway that served before its item-state view was loaded would show a running turn without its
     * earlier items, and rebuild a thread's conversation without its earlier turns: the model called without them.
     */
    @Test
    void aStartedGatewayHoldsEveryTurnTheItemStateTopicHeld() throws Exception {
        try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.onFreePort().start()) {
            Properties settings = new Properties();
            settings.put("bootstrap.servers", broker.bootstrapServers());
            TopicAdmin.createAll(settings, Topics.DEFAULTS, 1, (short) 1);
            settings.put("turnstream.gateway.port", "0");
            // one record per batch and per fetch: the view's load takes a fetch per turn, longer than the rest of the start
            settings.put("fetch.max.bytes", "1");
            settings.put("max.partition.fetch.bytes", "1");
            String lastTurn = writeStartedTurns(broker.bootstrapServers(), 500);

            try (Gateway gateway = Gateway.start(Settings.of(settings), ProviderEndpoints.simulatedOnly(null), List.of())) {
                assertThat(gateway.views().loaded()).as("loaded when start returns").isDone();
                assertThat(gateway.views().snapshot(lastTurn, null)).as("the last turn written before the start").isPresent();
                assertThat(health(gateway).statusCode()).isEqualTo(200);
            }
        }
    }

    /** Writes the turn_started upserts of {@code turns} turns to {@code llm.item-state}; returns the last one's id. */
    private static String writeStartedTurns(String bootstrapServers, int turns) {
        String turnId = null;
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrapServers, ProducerConfig.BATCH_SIZE_CONFIG, "1"), new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < turns; i++) {
                turnId = "turn-" + i;
                UITurnEvent started = new UITurnEvent(UiPayloadType.TURN_STARTED, turnId, "thread-" + i, "model",
                        "simulated", null, null, null, null);
                String json = Json.toString(new UpsertEnvelope(UUID.randomUUID().toString(), System.currentTimeMillis(),
                        turnId, 1, started.payloadType(), started));
                producer.send(new ProducerRecord<>(Topics.DEFAULTS.itemState(), turnId + "/turn", json));
            }
            producer.flush();
        }
        return turnId;
    }

    private HttpResponse<String> health(Gateway gateway) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.managementPort() + "/health"))
                .GET().build(), HttpResponse.BodyHandlers.ofString());
    }
}
