package io.turnstream.topology;

import static io.turnstream.topology.Events.delta;
import static io.turnstream.topology.Events.functionCallDone;
import static io.turnstream.topology.Events.functionCallStart;
import static io.turnstream.topology.Events.responseDone;
import static io.turnstream.topology.Events.responseStart;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.ToolCall;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UiPayloadType;
import io.turnstream.model.UpsertEnvelope;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The tenant named on response_start travels with the turn: on every lifecycle event and on its tool calls. */
class TurnTenantTest {

    private final TopologyHarness topology = new TopologyHarness();

    @AfterEach
    void close() {
        topology.close();
    }

    @Test
    void theTenantOfResponseStartIsOnTurnEventsAndToolCalls() {
        topology.send("run-1", startOfTenant("turn-1", "tenant-a"));
        topology.send("run-1", functionCallStart("fc", "read_file", "call-1"));
        topology.send("run-1", functionCallDone("fc", "read_file", "{\"path\":\"README.md\"}", "call-1"));
        topology.send("run-1", responseDone(ResponseStatus.COMPLETE));
        List<UpsertEnvelope> upserts = topology.upserts();

        assertThat(upserts).map(UpsertEnvelope::payload)
                .filteredOn(UITurnEvent.class::isInstance).map(UITurnEvent.class::cast)
                .extracting(UITurnEvent::type, UITurnEvent::tenantId)
                .containsExactly(tuple(UiPayloadType.TURN_STARTED, "tenant-a"),
                        tuple(UiPayloadType.TURN_COMPLETED, "tenant-a"));
        assertThat(topology.toolCalls()).extracting(ToolCall::tenantId).containsExactly("tenant-a");
        assertThat(upserts).as("every envelope, so a sink's rows carry the tenant")
                .extracting(UpsertEnvelope::tenantId).containsOnly("tenant-a");
    }

    @Test
    void aTurnClosedByTheIdleTimeoutKeepsItsTenant() {
        topology.send("run-2", startOfTenant("turn-2", "tenant-b"));
        topology.send("run-2", Events.itemStart("msg", "message"));
        topology.send("run-2", delta("msg", "half"));
        topology.advanceWallClock(Duration.ofMillis(topology.config.idleTimeoutMs() + 1_000));

        assertThat(topology.upserts()).map(UpsertEnvelope::payload)
                .filteredOn(UITurnEvent.class::isInstance).map(UITurnEvent.class::cast)
                .extracting(UITurnEvent::tenantId).containsExactly("tenant-b", "tenant-b");
    }

    @Test
    void aTurnOfNoTenantHasNoneOnItsEvents() {
        topology.send("run-3", responseStart("turn-3", "anthropic"));
        topology.send("run-3", responseDone(ResponseStatus.COMPLETE));

        assertThat(topology.upserts()).map(UpsertEnvelope::payload).map(UITurnEvent.class::cast)
                .extracting(UITurnEvent::tenantId).containsOnlyNulls();
    }

    private static StreamPayload.ResponseStart startOfTenant(String turnId, String tenant) {
        return new StreamPayload.ResponseStart("resp-" + turnId, turnId, "thread-1", null, "model-x", "anthropic", 0, tenant);
    }
}
