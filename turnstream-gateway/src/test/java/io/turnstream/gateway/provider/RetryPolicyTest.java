package io.turnstream.gateway.provider;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpHeaders;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RetryPolicyTest {

    private final RetryPolicy policy = new RetryPolicy(4, Duration.ofMillis(1000), Duration.ofSeconds(30));

    @Test
    void backsOffExponentiallyWithJitterUpToTheCap() {
        for (int i = 0; i < 100; i++) {
            assertThat(policy.delay(1, null)).isBetween(Duration.ofMillis(500), Duration.ofMillis(1000));
            assertThat(policy.delay(3, null)).isBetween(Duration.ofMillis(2000), Duration.ofMillis(4000));
            assertThat(policy.delay(20, null)).isBetween(Duration.ofSeconds(15), Duration.ofSeconds(30));
        }
    }

    @Test
    void waitsExactlyWhatTheProviderAsksForUnlessItIsTooLong() {
        assertThat(policy.delay(1, Duration.ofSeconds(7))).isEqualTo(Duration.ofSeconds(7));
        assertThat(policy.delay(1, Duration.ofMinutes(5))).isNull();
    }

    @Test
    void readsRetryAfterInMillisecondsOrSeconds() {
        assertThat(ProviderClient.retryAfter(headers(Map.of("retry-after", List.of("2"))))).isEqualTo(Duration.ofSeconds(2));
        assertThat(ProviderClient.retryAfter(headers(Map.of("retry-after-ms", List.of("250"), "retry-after", List.of("1")))))
                .isEqualTo(Duration.ofMillis(250));
        assertThat(ProviderClient.retryAfter(headers(Map.of("retry-after", List.of("Wed, 21 Oct 2015 07:28:00 GMT")))))
                .isNull();
        assertThat(ProviderClient.retryAfter(headers(Map.of()))).isNull();
    }

    private static HttpHeaders headers(Map<String, List<String>> values) {
        return HttpHeaders.of(values, (name, value) -> true);
    }
}
