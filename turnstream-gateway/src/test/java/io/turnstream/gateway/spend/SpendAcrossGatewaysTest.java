package io.turnstream.gateway.spend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.turnstream.gateway.BrokerStack;
import io.turnstream.gateway.Gateway;
import io.turnstream.gateway.http.ApiError;
import io.turnstream.gateway.security.SecurityConfig;
import io.turnstream.gateway.sim.SimulatedAnthropicServer;
import io.turnstream.gateway.sim.SimulatedReply;
import io.turnstream.gateway.sim.SimulatedRequest;
import io.turnstream.gateway.sim.SimulatedText;
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.gateway.turn.TurnRequest;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.runtime.TraceContext;
import io.turnstream.testsupport.UsesBroker;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two gateway instances on one broker enforce one total per tenant: what a tenant spent or runs through
 * the first is refused by the second, which only knows it from Kafka (the turn requests, the step
 * checkpoints and the turn events the topology writes).
 */
@UsesBroker
class SpendAcrossGatewaysTest {

    private static final Duration KAFKA_WAIT = Duration.ofSeconds(60);

    @TempDir
    static Path dir;

    @RegisterExtension
    static final BrokerStack stack = new BrokerStack();
    private static SimulatedAnthropicServer provider;
    private static Gateway first;
    private static Gateway second;

    @BeforeAll
    static void startEverything() throws Exception {
        stack.broker(3);
        stack.topology("spend-test", dir.resolve("state"));
        provider = stack.closing(SimulatedAnthropicServer.start(0, SpendAcrossGatewaysTest::script, 0));
        Path keys = Files.writeString(dir.resolve("api-keys"),
                "budgeted:key-of-budgeted-0123456789\nbusy:key-of-busy-0123456789\n");
        first = gateway(keys);
        second = gateway(keys);
    }

    private static Gateway gateway(Path keys) {
        Properties settings = stack.gatewaySettings();
        settings.put(SecurityConfig.API_KEYS_FILE, keys.toString());
        settings.put("turnstream.gateway.tenant.max-concurrent-turns", "1");
        settings.put("turnstream.gateway.tenant.budgeted.max-tokens-per-day", "1");
        return stack.gateway(settings, provider);
    }

    /**
     * "slow:" prompts stream for a while (about 12 s) and end by themselves (a cancel during the gateways'
     * first rebalance can be lost with the owner's aborted transaction, which is not what this test is about);
     * anything else is a short answer.
     */
    private static SimulatedReply script(SimulatedRequest request) {
        return request.firstUserText().startsWith("slow:")
                ? SimulatedReply.answer().text(SimulatedText.words(600)).tokensPerSecond(50)
                : SimulatedReply.answer().text("A short answer.");
    }

    private static TurnStatus start(Gateway gateway, String tenant, String prompt) {
        return gateway.admission().startTurn(TurnRequest.prompt(null, null, prompt), tenant, TraceContext.fresh());
    }

    @Test
    void aDailyTokenBudgetSpentThroughOneGatewayIsRefusedByTheOther() {
        String turnId = start(first, "budgeted", "spend the budget").turnId();
        await().atMost(KAFKA_WAIT).until(() -> second.views().snapshot(turnId, null)
                .map(snapshot -> snapshot.status() == TurnPhase.COMPLETE).orElse(false));
        await("both gateways count the turn's usage from Kafka").atMost(KAFKA_WAIT)
                .until(() -> first.tenantUsage().today("budgeted").tokens() > 0
                        && second.tenantUsage().today("budgeted").tokens() > 0);

        assertThatThrownBy(() -> start(second, "budgeted", "one more")).isInstanceOfSatisfying(ApiError.class, refused -> {
            assertThat(refused.status()).isEqualTo(429);
            assertThat(refused.getMessage()).contains("tenant budgeted has used", "its daily token budget of 1",
                    "turnstream.gateway.tenant.budgeted.max-tokens-per-day", "it resets at ");
            assertThat(Long.parseLong(refused.headers().get("Retry-After"))).isBetween(1L, Duration.ofDays(1).toSeconds());
        });
        assertThatThrownBy(() -> start(first, "budgeted", "one more")).isInstanceOf(ApiError.class);
    }

    @Test
    void concurrentTurnsAcceptedByOneGatewayCountOnTheOther() {
        TurnStatus running = start(first, "busy", "slow: hold the only slot");
        await("the second gateway reads the turn request").atMost(KAFKA_WAIT)
                .until(() -> second.tenantUsage().running("busy") == 1);

        assertThatThrownBy(() -> start(second, "busy", "one too many")).isInstanceOfSatisfying(ApiError.class, refused -> {
            assertThat(refused.status()).isEqualTo(429);
            assertThat(refused.getMessage()).startsWith("tenant busy is running 1 turns, the limit "
                    + "(turnstream.gateway.tenant.max-concurrent-turns, across all gateway instances)");
        });

        await("the second gateway reads the turn's end").atMost(KAFKA_WAIT.multipliedBy(2))
                .until(() -> second.tenantUsage().running("busy") == 0);
        TurnStatus next = start(second, "busy", "now there is room");
        assertThat(next.status()).isEqualTo(TurnPhase.RUNNING);
    }
}
