package io.turnstream.gateway.chat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.turnstream.gateway.security.SecurityConfig;
import io.turnstream.gateway.view.LiveTopicsGateway;
import io.turnstream.gateway.view.TurnRecords;
import io.turnstream.testsupport.UsesBroker;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@code /api/chat} on a gateway with API keys: a chat needs a key, and only its tenant may resume it. */
@UsesBroker
class ChatTenantsTest {

    private static final String KEY_A = "key-a-" + UUID.randomUUID();
    private static final String KEY_B = "key-b-" + UUID.randomUUID();

    private static LiveTopicsGateway live;
    private static final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void startGateway() throws Exception {
        Path keys = Files.writeString(Files.createTempDirectory("chat-tenants").resolve("api-keys"),
                "tenant-a:" + KEY_A + "\ntenant-b:" + KEY_B + "\n");
        live = LiveTopicsGateway.start(Map.of(SecurityConfig.API_KEYS_FILE, keys.toString()));
    }

    @AfterAll
    static void stopGateway() {
        live.close();
    }

    @Test
    void aChatWithoutAKeyIsRefused() throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(live.gateway().baseUrl() + "/api/chat"))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"id\": \"chat-1\", \"trigger\": \"submit-message\", "
                        + "\"messages\": [{\"role\": \"user\", \"content\": \"Hello\"}]}"))
                .build(), HttpResponse.BodyHandlers.ofString());

        assertThat(response.statusCode()).isEqualTo(401);
        assertThat(response.body()).contains("an API key is needed");
    }

    @Test
    void aRunningChatIsResumedForItsTenantOnly() throws Exception {
        TurnRecords turn = live.newTurn("chat-" + UUID.randomUUID(), "tenant-a");
        turn.started();
        await().until(() -> live.gateway().views().runningTurnOf(turn.threadId, "tenant-a").isPresent());

        HttpResponse<InputStream> own = resume(turn.threadId, KEY_A);
        own.body().close();
        HttpResponse<InputStream> other = resume(turn.threadId, KEY_B);

        assertThat(own.statusCode()).isEqualTo(200);
        assertThat(own.headers().firstValue("x-vercel-ai-ui-message-stream")).hasValue("v1");
        assertThat(other.statusCode()).as("another tenant's chat is no running turn of its own").isEqualTo(204);
    }

    @Test
    void anotherTenantsTurnOnTheSameChatIdLeavesTheFirstTenantsResumeAlone() throws Exception {
        String chatId = "chat-" + UUID.randomUUID();
        TurnRecords first = live.newTurn(chatId, "tenant-a");
        first.started();
        await().until(() -> live.gateway().views().runningTurnOf(chatId, "tenant-a").isPresent());
        TurnRecords second = live.newTurn(chatId, "tenant-b");
        second.started();
        await().until(() -> live.gateway().views().runningTurnOf(chatId, "tenant-b").isPresent());

        assertThat(live.gateway().views().runningTurnOf(chatId, "tenant-a")).hasValue(first.id);
        assertThat(live.gateway().views().runningTurnOf(chatId, "tenant-b")).hasValue(second.id);
        HttpResponse<InputStream> own = resume(chatId, KEY_A);
        own.body().close();
        assertThat(own.statusCode()).isEqualTo(200);
    }

    @Test
    void chatIdsThatAreNoPlainIdsAre400() throws Exception {
        HttpResponse<String> tooLong = http.send(HttpRequest.newBuilder(URI.create(live.gateway().baseUrl() + "/api/chat"))
                .header("content-type", "application/json").header("Authorization", "Bearer " + KEY_A)
                .POST(HttpRequest.BodyPublishers.ofString("{\"id\": \"" + "x".repeat(129) + "\", \"trigger\": \"submit-message\", "
                        + "\"messages\": [{\"role\": \"user\", \"content\": \"Hello\"}]}"))
                .build(), HttpResponse.BodyHandlers.ofString());
        HttpResponse<InputStream> slash = resume("a%2Fb", KEY_A);
        slash.body().close();

        assertThat(tooLong.statusCode()).isEqualTo(400);
        assertThat(tooLong.body()).contains("1 to 128 letters, digits");
        assertThat(slash.statusCode()).isEqualTo(400);
    }

    private static HttpResponse<InputStream> resume(String chatId, String key) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(live.gateway().baseUrl() + "/api/chat/" + chatId + "/stream"))
                .header("Authorization", "Bearer " + key).build(), HttpResponse.BodyHandlers.ofInputStream());
    }
}
