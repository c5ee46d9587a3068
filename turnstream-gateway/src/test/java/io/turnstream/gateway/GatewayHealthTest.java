package io.turnstream.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.model.Json;
import io.turnstream.model.Topics;
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
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** The gateway's health on its management port follows its Kafka clients: up with the cluster, down without it. */
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

    private HttpResponse<String> health(Gateway gateway) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.managementPort() + "/health"))
                .GET().build(), HttpResponse.BodyHandlers.ofString());
    }
}
