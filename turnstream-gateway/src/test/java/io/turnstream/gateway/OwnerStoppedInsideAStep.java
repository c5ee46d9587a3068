package io.turnstream.gateway;

import static org.awaitility.Awaitility.await;

import io.turnstream.gateway.sim.SimulatedAnthropicServer;
import io.turnstream.gateway.sim.SimulatedReply;
import io.turnstream.gateway.sim.SimulatedText;
import io.turnstream.gateway.turn.TurnRequest;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.runtime.Settings;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A turn whose owner stopped inside its step, for the takeover tests: the provider answers one long step (about
 * 60 s), and the gateway that runs the turn is closed while it streams, with a drain too short to reach the step's
 * end, so it is cut off there and nothing of the step is committed.
 */
final class OwnerStoppedInsideAStep {

    private static final Duration WAIT = Duration.ofSeconds(60);

    private final BrokerStack stack;
    private final AtomicInteger calls = new AtomicInteger();
    private final SimulatedAnthropicServer provider;

    OwnerStoppedInsideAStep(BrokerStack stack) throws Exception {
        this.stack = stack;
        this.provider = stack.closing(SimulatedAnthropicServer.start(0, request -> {
            calls.incrementAndGet();
            return SimulatedReply.answer().text(SimulatedText.words(3000)).tokensPerSecond(50);
        }, 0));
    }

    /** The provider the next owner calls too. */
    SimulatedAnthropicServer provider() {
        return provider;
    }

    /** How many model calls the provider took. */
    int calls() {
        return calls.get();
    }

    /** Starts a turn at a gateway of its own and stops that gateway once the turn's model call streams. */
    TurnStatus startAndStop(String prompt) throws Exception {
        Properties settings = stack.gatewaySettings();
        settings.put("turnstream.gateway.drain-timeout-ms", "200");
        int before = calls.get();
        try (Gateway first = Gateway.start(Settings.of(settings), ProviderEndpoints.simulatedOnly(provider.baseUrl()),
                List.of())) {
            TurnStatus turn = first.admission().startTurn(TurnRequest.prompt(null, null, prompt));
            await("the first owner streams the step").atMost(WAIT).until(() -> calls.get() == before + 1);
            return turn;
        }
    }
}
