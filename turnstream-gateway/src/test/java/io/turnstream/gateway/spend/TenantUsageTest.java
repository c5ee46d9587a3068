package io.turnstream.gateway.spend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.turnstream.gateway.http.ApiError;
import io.turnstream.gateway.ownership.ManualClock;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UiPayloadType;
import io.turnstream.runtime.Settings;
import java.time.Duration;
import java.time.Instant;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * Two gateway instances, each with its own {@link TenantUsage}, fed the same records as they would read
 * them from Kafka: whatever one admits, the other counts once it has read it, so they enforce one total.
 */
class TenantUsageTest {

    private static final Instant MORNING = Instant.parse("2026-11-26T09:00:00Z");

    private final ManualClock clock = new ManualClock(MORNING.toEpochMilli());

    private TenantUsage usage(String... keyValues) {
        Properties props = new Properties();
        props.setProperty("turnstream.gateway.tenant.max-concurrent-turns", "2");
        props.setProperty("turnstream.gateway.tenant.max-turns-per-minute", "3");
        for (int i = 0; i < keyValues.length; i += 2) {
            props.setProperty(keyValues[i], keyValues[i + 1]);
        }
        return new TenantUsage(SpendLimits.from(Settings.of(props)), clock);
    }

    /** What every gateway reads of a turn another (or the same) gateway accepted. */
    private void requested(String turnId, TenantUsage... gateways) {
        for (TenantUsage gateway : gateways) {
            gateway.requested("a", turnId, clock.millis());
        }
    }

    private void used(String turnId, long tokens, double cost, TenantUsage... gateways) {
        for (TenantUsage gateway : gateways) {
            gateway.used("a", turnId, tokens, cost, clock.millis());
        }
    }

    private void ended(String turnId, TenantUsage... gateways) {
        for (TenantUsage gateway : gateways) {
            gateway.ended("a", turnId);
        }
    }

    @Test
    void aSpentTokenBudgetIsRefusedOnEveryInstanceUntilMidnightUtc() {
        TenantUsage first = usage("turnstream.gateway.tenant.max-tokens-per-day", "1000");
        TenantUsage second = usage("turnstream.gateway.tenant.max-tokens-per-day", "1000");
        first.admit("a", "turn-1");
        requested("turn-1", first, second);
        used("turn-1", 600, 0, first, second);

        assertThatCode(() -> second.admit("a", "turn-2")).as("600 of 1000 tokens: within the budget").doesNotThrowAnyException();
        second.withdraw("turn-2");
        used("turn-1", 1000, 0, first, second);

        assertThatThrownBy(() -> second.admit("a", "turn-3")).isInstanceOfSatisfying(ApiError.class, refused -> {
            assertThat(refused.status()).isEqualTo(429);
            assertThat(refused.getMessage()).isEqualTo("tenant a has used 1000 tokens today, its daily token budget of "
                    + "1000 (turnstream.gateway.tenant.max-tokens-per-day); it resets at 2026-11-27T00:00:00Z");
            assertThat(refused.headers()).containsEntry("Retry-After", String.valueOf(Duration.ofHours(15).toSeconds()));
        });
        assertThatThrownBy(() -> first.admit("a", "turn-3")).isInstanceOf(ApiError.class);
        assertThatCode(() -> second.admit("b", "turn-of-b")).as("budgets are per tenant").doesNotThrowAnyException();

        clock.advance(Duration.ofHours(15));
        assertThat(second.today("a").tokens()).isZero();
        assertThatCode(() -> second.admit("a", "turn-4")).as("a new UTC day").doesNotThrowAnyException();
    }

    @Test
    void usageReportedTwiceOrCumulativelyCountsOnceAndYesterdaysStaysYesterdays() {
        TenantUsage gateway = usage();
        requested("turn-1", gateway);
        used("turn-1", 100, 0.01, gateway);
        used("turn-1", 100, 0.01, gateway); // the same checkpoint read again (a takeover re-reads it)
        used("turn-1", 250, 0.02, gateway); // the next step: the turn's usage so far
        used("turn-1", 250, 0.02, gateway); // turn_completed with the same sum
        ended("turn-1", gateway);

        assertThat(gateway.today("a").tokens()).isEqualTo(250);
        assertThat(gateway.today("a").costUsd()).isEqualTo(0.02, org.assertj.core.data.Offset.offset(1e-9));

        gateway.used("a", "turn-yesterday", 5_000, 1, MORNING.minus(Duration.ofDays(1)).toEpochMilli());
        assertThat(gateway.today("a").tokens()).as("a late record of yesterday's turn").isEqualTo(250);
    }

    @Test
    void aTenantsOwnCostBudgetReplacesTheGeneralOne() {
        TenantUsage gateway = usage("turnstream.gateway.tenant.max-cost-usd-per-day", "10",
                "turnstream.gateway.tenant.a.max-cost-usd-per-day", "0.50");
        requested("turn-1", gateway);
        used("turn-1", 10, 0.5, gateway);

        assertThatThrownBy(() -> gateway.admit("a", "turn-2")).isInstanceOfSatisfying(ApiError.class, refused ->
                assertThat(refused.getMessage()).startsWith("tenant a has spent 0.5000 USD today, its daily cost budget of 0.5 USD "
                        + "(turnstream.gateway.tenant.a.max-cost-usd-per-day); it resets at 2026-11-27T00:00:00Z"));
        gateway.used("b", "turn-of-b", 10, 0.5, clock.millis());
        assertThatCode(() -> gateway.admit("b", "turn-b-2")).as("b has the general budget").doesNotThrowAnyException();
    }

    @Test
    void concurrentTurnsCountEveryInstancesTurnsOnceEachIsRead() {
        TenantUsage first = usage();
        TenantUsage second = usage();
        first.admit("a", "turn-1");
        first.admit("a", "turn-2");

        assertThatThrownBy(() -> first.admit("a", "turn-3")).isInstanceOfSatisfying(ApiError.class, refused -> {
            assertThat(refused.getMessage()).startsWith("tenant a is running 2 turns, the limit "
                    + "(turnstream.gateway.tenant.max-concurrent-turns, across all gateway instances)");
            assertThat(refused.headers()).containsKey("Retry-After");
        });
        requested("turn-1", first, second);
        requested("turn-2", first, second);
        assertThat(first.running("a")).as("its own turns read back count once").isEqualTo(2);
        assertThatThrownBy(() -> second.admit("a", "turn-3")).isInstanceOf(ApiError.class);

        ended("turn-1", first, second);
        assertThatCode(() -> second.admit("a", "turn-3")).doesNotThrowAnyException();
        assertThat(second.running("a")).isEqualTo(2);
    }

    @Test
    void turnsPerMinuteIsASlidingWindowOverEveryInstancesStarts() {
        TenantUsage first = usage("turnstream.gateway.tenant.max-concurrent-turns", "100");
        TenantUsage second = usage("turnstream.gateway.tenant.max-concurrent-turns", "100");
        requested("turn-1", first, second);
        clock.advance(Duration.ofSeconds(20));
        requested("turn-2", first, second);
        requested("turn-3", first, second);
        clock.advance(Duration.ofSeconds(10));

        assertThatThrownBy(() -> second.admit("a", "turn-4")).isInstanceOfSatisfying(ApiError.class, refused -> {
            assertThat(refused.getMessage()).startsWith("tenant a has started 3 turns in the last minute");
            assertThat(refused.headers()).containsEntry("Retry-After", "30");
        });
        clock.advance(Duration.ofSeconds(30));
        assertThatCode(() -> second.admit("a", "turn-4")).doesNotThrowAnyException();
    }

    @Test
    void aTurnThatNeverReachedKafkaOrWhoseEndWasLostStopsCounting() {
        TenantUsage gateway = usage();
        gateway.admit("a", "turn-1");
        gateway.withdraw("turn-1");
        assertThat(gateway.running("a")).isZero();

        requested("turn-2", gateway);
        clock.advance(Duration.ofMillis(TenantUsage.STALE_OPEN_TURN_MS).plusMinutes(1));
        gateway.admit("a", "turn-3");
        assertThat(gateway.running("a")).as("turn-2 is a day old and never ended: only turn-3 runs").isEqualTo(1);
    }

    @Test
    void anEndReadBeforeItsRequestLeavesNothingRunning() {
        TenantUsage gateway = usage();
        ended("turn-1", gateway);
        requested("turn-1", gateway);

        assertThat(gateway.running("a")).isZero();
    }

    @Test
    void aFailedTurnsUsageCountsItsFailedCallsToo() {
        TenantUsage gateway = usage("turnstream.gateway.tenant.max-tokens-per-day", "1000",
                "turnstream.gateway.tenant.max-cost-usd-per-day", "1.0");
        gateway.admit("a", "turn-1");
        requested("turn-1", gateway);
        // the checkpoint of its one completed step, then its end after a failed step
        used("turn-1", 300, 0.25, gateway);
        gateway.ended("a", "turn-1", new UITurnEvent(UiPayloadType.TURN_ERROR, "turn-1", "thread-1", null, null, null,
                new UITurnEvent.Usage(250, 50, 300, null, null, null, 0.25), ErrorInfo.of("overloaded_error", "busy"),
                "a", null, new UITurnEvent.Usage(600, 100, 700, null, null, null, 0.5)), clock.millis());

        assertThat(gateway.today("a")).isEqualTo(new TenantUsage.Spent(1000, 0.75));
        assertThat(gateway.running("a")).isZero();
        assertThatThrownBy(() -> gateway.admit("a", "turn-2")).isInstanceOfSatisfying(ApiError.class,
                error -> assertThat(error.getMessage()).contains("1000 tokens today"));
    }
}
