package io.turnstream.gateway.view;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.turnstream.gateway.Gateway;
import io.turnstream.testsupport.UsesBroker;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every subscription the HTTP routes open for a turn (an SSE stream of {@code GET /v1/turns/{turnId}/events}, the
 * same channel {@code /api/chat} and the OpenAI-compatible streams subscribe to, and a caller waiting for the turn's
 * end, as the non-streaming OpenAI routes and a continued thread's history do) is let go when the turn ends, however
 * it ends, and when its client goes away before: the views hold nothing for a turn that is over or a client that is
 * gone. On a real broker, with the topology's records written by the test.
 */
@UsesBroker
class TurnSubscriptionsTest {

    private static LiveTopicsGateway live;
    private static Gateway gateway;
    private static final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void startGateway() throws Exception {
        // a short heartbeat: a gone client is noticed when a write to it fails
        live = LiveTopicsGateway.start(Map.of(TurnViewConfig.PREFIX + "heartbeat-ms", "100"));
        gateway = live.gateway();
    }

    @AfterAll
    static void stopGateway() {
        live.close();
    }

    @Test
    void aCompletedTurnLetsGoOfItsStreamsAndWaiters() {
        endsReleasingEverything(TurnRecords::completed);
    }

    @Test
    void aFailedTurnLetsGoOfItsStreamsAndWaiters() {
        endsReleasingEverything(turn -> turn.failed("TOOL_RESULT_TIMEOUT", "no result"));
    }

    @Test
    void anAbortedTurnLetsGoOfItsStreamsAndWaiters() {
        endsReleasingEverything(TurnRecords::aborted);
    }

    @Test
    void aClientThatGoesAwayIsLetGoWhileTheTurnRuns() throws IOException {
        TurnRecords turn = live.newTurn("thread-" + System.nanoTime());
        turn.started();
        InputStream stream = open(turn.id);
        CompletableFuture<TurnSnapshot> waiter = gateway.views().ended(turn.id);
        await().atMost(Duration.ofSeconds(30)).until(() -> gateway.views().openSubscriptions(turn.id) == 2);

        stream.close();
        // as ThreadHistory does when it stops waiting for a turn that does not end
        waiter.cancel(false);

        await().atMost(Duration.ofSeconds(30)).until(() -> gateway.views().openSubscriptions(turn.id) == 0);
        turn.completed();
    }

    private static void endsReleasingEverything(Consumer<TurnRecords> end) {
        TurnRecords turn = live.newTurn("thread-" + System.nanoTime());
        turn.started();
        InputStream first = open(turn.id);
        InputStream second = open(turn.id);
        CompletableFuture<TurnSnapshot> waiter = gateway.views().ended(turn.id);
        await().atMost(Duration.ofSeconds(30)).until(() -> gateway.views().openSubscriptions(turn.id) == 3);

        end.accept(turn);

        await().atMost(Duration.ofSeconds(30)).until(waiter::isDone);
        assertThat(waiter).isCompleted();
        assertThat(CompletableFuture.supplyAsync(() -> readToTheEnd(first))).as("the server ends the stream at the "
                + "turn's end").succeedsWithin(Duration.ofSeconds(30)).asString().contains("turn_");
        assertThat(CompletableFuture.supplyAsync(() -> readToTheEnd(second))).succeedsWithin(Duration.ofSeconds(30))
                .asString().contains("turn_");
        await().atMost(Duration.ofSeconds(30)).until(() -> gateway.views().openSubscriptions(turn.id) == 0);
    }

    private static InputStream open(String turnId) {
        try {
            HttpResponse<InputStream> response = http.send(HttpRequest.newBuilder(
                    URI.create(gateway.baseUrl() + "/v1/turns/" + turnId + "/events")).build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            assertThat(response.statusCode()).isEqualTo(200);
            return response.body();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Everything the server sends until it closes the stream. */
    private static String readToTheEnd(InputStream stream) {
        try (stream) {
            return new String(stream.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
