package io.turnstream.gateway.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.turnstream.gateway.http.ApiError;
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.gateway.turn.TurnStatus;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** A key starts one turn per request for 24 h; another request under the key is refused. */
class IdempotencyKeysTest {

    private final MutableClock clock = new MutableClock();
    private final IdempotencyKeys keys = new IdempotencyKeys(clock, 2);
    private final AtomicInteger started = new AtomicInteger();
    private final Supplier<TurnStatus> start = () -> {
        int n = started.incrementAndGet();
        return new TurnStatus("turn-" + n, "thread-" + n, "run-" + n, TurnPhase.RUNNING);
    };

    @Test
    void theSameRequestUnderTheSameKeyGetsTheFirstTurnForADay() {
        IdempotencyKeys.Started first = keys.start("acme", "k1", "POST /v1/turns\n{}", start);
        IdempotencyKeys.Started again = keys.start("acme", "k1", "POST /v1/turns\n{}", start);

        assertThat(first.replayed()).isFalse();
        assertThat(again.replayed()).isTrue();
        assertThat(again.turn()).isEqualTo(first.turn());
        assertThat(started).hasValue(1);

        clock.advance(IdempotencyKeys.RETENTION);
        assertThat(keys.start("acme", "k1", "POST /v1/turns\n{}", start).replayed()).as("after 24 h").isFalse();
        assertThat(started).hasValue(2);
    }

    @Test
    void anotherRequestUnderAUsedKeyIs422AndKeysArePerTenant() {
        keys.start("acme", "k1", "POST /v1/turns\n{\"prompt\": \"a\"}", start);

        assertThatThrownBy(() -> keys.start("acme", "k1", "POST /v1/turns\n{\"prompt\": \"b\"}", start))
                .isInstanceOf(ApiError.class).hasMessageContaining("was used for a different request")
                .extracting(e -> ((ApiError) e).status()).isEqualTo(422);
        assertThat(keys.start("globex", "k1", "POST /v1/turns\n{\"prompt\": \"b\"}", start).replayed()).isFalse();
        assertThat(keys.start(null, "k2", "x", () -> null).replayed()).isFalse();
        assertThat(started).hasValue(2);
    }

    @Test
    void aRefusedStartLeavesTheKeyFreeAndBadKeysAre400() {
        assertThatThrownBy(() -> keys.start("acme", "k1", "x", () -> {
            throw new ApiError(429, "busy");
        })).hasMessage("busy");
        assertThat(keys.start("acme", "k1", "x", start).replayed()).isFalse();
        assertThatThrownBy(() -> keys.start("acme", "has space", "x", start)).isInstanceOf(ApiError.class)
                .hasMessageContaining("Idempotency-Key must be");
    }

    @Test
    void pastItsBoundTheOldestKeyIsForgotten() {
        keys.start("acme", "k1", "x", start);
        keys.start("acme", "k2", "x", start);
        keys.start("acme", "k3", "x", start);

        assertThat(keys.start("acme", "k3", "x", start).replayed()).isTrue();
        assertThat(keys.start("acme", "k1", "x", start).replayed()).isFalse();
    }

    private static final class MutableClock extends Clock {
        private Instant now = Instant.parse("2026-11-25T12:00:00Z");

        void advance(Duration by) {
            now = now.plus(by);
        }

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }
}
