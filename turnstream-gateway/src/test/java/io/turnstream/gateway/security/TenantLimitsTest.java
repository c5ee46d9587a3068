package io.turnstream.gateway.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.turnstream.gateway.http.ApiError;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class TenantLimitsTest {

    private final AtomicLong now = new AtomicLong(TimeUnit.HOURS.toNanos(1));
    private final TenantLimits limits = new TenantLimits(2, 3, now::get);

    @Test
    void aTenantRunningItsLimitIsRefusedUntilATurnEnds() {
        TenantLimits.Permit first = limits.acquire("a");
        limits.acquire("a");

        assertThatThrownBy(() -> limits.acquire("a")).isInstanceOfSatisfying(ApiError.class, refused -> {
            assertThat(refused.status()).isEqualTo(429);
            assertThat(refused.headers()).containsKey("Retry-After");
        });
        limits.acquire("b");
        first.release();
        first.release();
        limits.acquire("a");
        assertThatThrownBy(() -> limits.acquire("a")).isInstanceOf(ApiError.class);
    }

    @Test
    void turnsPerMinuteAreASlidingWindowAndRetryAfterSaysWhenTheOldestLeavesIt() {
        limits.acquire("a").release();
        advanceSeconds(20);
        limits.acquire("a").release();
        limits.acquire("a").release();
        advanceSeconds(10);

        assertThatThrownBy(() -> limits.acquire("a")).isInstanceOfSatisfying(ApiError.class, refused -> {
            assertThat(refused.getMessage()).contains("tenant a has started 3 turns in the last minute");
            assertThat(refused.headers()).containsEntry("Retry-After", "30");
        });
        advanceSeconds(30);
        limits.acquire("a").release();
    }

    private void advanceSeconds(long seconds) {
        now.addAndGet(TimeUnit.SECONDS.toNanos(seconds));
    }
}
