package io.turnstream.gateway.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.turnstream.gateway.http.ApiError;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Per-tenant request rate and open streams, with the clock under the test's control. */
class TenantTrafficTest {

    private final AtomicLong now = new AtomicLong();
    private final TenantTraffic traffic = new TenantTraffic(3, 2, now::get);

    @Test
    void aTenantPastItsRateIs429WithRetryAfterWhileAnotherTenantIsServed() {
        for (int i = 0; i < 3; i++) {
            traffic.request("tenant-a");
        }

        assertThatThrownBy(() -> traffic.request("tenant-a")).isInstanceOfSatisfying(ApiError.class, e -> {
            assertThat(e.status()).isEqualTo(429);
            assertThat(e.headers()).containsEntry("Retry-After", "1").containsEntry("Connection", "close");
            assertThat(e.getMessage()).contains("max-requests-per-second");
        });
        traffic.request("tenant-b");
        now.addAndGet(TimeUnit.MILLISECONDS.toNanos(340));
        traffic.request("tenant-a");
    }

    @Test
    void openStreamsAreCappedPerTenantAndFreedWhenClosed() {
        Runnable first = traffic.openStream("tenant-a");
        traffic.openStream("tenant-a");

        assertThatThrownBy(() -> traffic.openStream("tenant-a")).isInstanceOfSatisfying(ApiError.class,
                e -> assertThat(e.status()).isEqualTo(429));
        traffic.openStream("tenant-b");
        first.run();
        first.run();
        assertThat(traffic.openStreams("tenant-a")).isEqualTo(1);
        traffic.openStream("tenant-a");
    }
}
