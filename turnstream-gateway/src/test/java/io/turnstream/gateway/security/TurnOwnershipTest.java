package io.turnstream.gateway.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.turnstream.gateway.http.ApiError;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The wait for a turn no one knows yet is a future, not a sleeping request thread. */
class TurnOwnershipTest {

    private final Map<String, TurnOwnership.Owner> inKafka = new ConcurrentHashMap<>();
    private final TurnOwnership ownership = new TurnOwnership(turnId -> Optional.ofNullable(inKafka.get(turnId)),
            Duration.ofMinutes(5));

    @AfterEach
    void close() {
        ownership.close();
    }

    @Test
    void anUnknownTurnIsAPendingFutureThatCompletesWhenKafkaShowsTheTurn() {
        CompletableFuture<Void> visible = ownership.whenVisible("tenant-a", "turn-1");

        assertThat(visible).as("returned at once, without waiting").isNotDone();
        inKafka.put("turn-1", new TurnOwnership.Owner("tenant-a"));
        await().atMost(Duration.ofSeconds(30)).until(visible::isDone);
        assertThat(visible).isCompleted();
    }

    @Test
    void anotherTenantsTurnFailsWith404() throws Exception {
        TurnOwnership quick = new TurnOwnership(turnId -> Optional.of(new TurnOwnership.Owner("tenant-a")), Duration.ZERO);
        try {
            CompletableFuture<Void> visible = quick.whenVisible("tenant-b", "turn-2");

            assertThat(quick.visibleNow("tenant-a", "turn-2")).isTrue();
            assertThat(quick.visibleNow("tenant-b", "turn-2")).isFalse();
            assertThat(visible).isCompletedExceptionally();
            try {
                visible.get();
            } catch (ExecutionException e) {
                assertThat(e.getCause()).isInstanceOf(ApiError.class).hasMessageContaining("no turn turn-2");
            }
        } finally {
            quick.close();
        }
    }
}
