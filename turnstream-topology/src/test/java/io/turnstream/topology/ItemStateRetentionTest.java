package io.turnstream.topology;

import static io.turnstream.topology.Events.delta;
import static io.turnstream.topology.Events.done;
import static io.turnstream.topology.Events.itemStart;
import static io.turnstream.topology.Events.responseDone;
import static io.turnstream.topology.Events.responseStart;
import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.ToolState;
import io.turnstream.runtime.Settings;
import java.time.Duration;
import java.util.Properties;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A closed turn's keys on the compacted {@code llm.item-state} get tombstones once the retention has passed. */
class ItemStateRetentionTest {

    private static final Duration RETENTION = Duration.ofHours(2);

    private final TopologyHarness topology = new TopologyHarness(TopologyConfig.from(Settings.of(retention())));

    @AfterEach
    void close() {
        topology.close();
    }

    @Test
    void aClosedTurnsKeysAreDeletedAfterTheRetentionAndAnOpenTurnsStay() {
        runTurn("run-old", "turn-old", "msg-1", "msg-2");
        topology.send("run-open", responseStart("turn-open", "anthropic"));
        topology.send("run-open", itemStart("msg", "message"));
        topology.send("run-open", delta("msg", "still going"));
        topology.advanceWallClock(Duration.ofSeconds(2));
        assertThat(topology.itemState().keySet()).contains("turn-old/turn", "turn-old/msg-1", "turn-old/msg-2",
                "turn-old/tool-status/call-1",
                "turn-open/turn", "turn-open/msg");

        topology.advanceWallClock(RETENTION.minusMinutes(1));
        assertThat(topology.itemState().keySet()).as("within the retention").contains("turn-old/turn",
                "turn-old/msg-1", "turn-old/msg-2");

        topology.advanceWallClock(Duration.ofMinutes(2));

        assertThat(topology.itemState().keySet()).as("after the retention")
                .noneMatch(key -> key.startsWith("turn-old/"))
                .contains("turn-open/turn", "turn-open/msg");
    }

    @Test
    void theRetentionDefaultsToSevenDays() {
        assertThat(TopologyConfig.defaults().itemStateRetentionMs()).isEqualTo(Duration.ofDays(7).toMillis());
    }

    private void runTurn(String runId, String turnId, String... messageIds) {
        topology.send(runId, responseStart(turnId, "anthropic"));
        topology.send(runId, new StreamPayload.ToolStatus(null, "call-1", "read_file", ToolState.RUNNING, 1L, null, null));
        for (String id : messageIds) {
            topology.send(runId, itemStart(id, "message"));
            topology.send(runId, delta(id, "text of " + id));
            topology.send(runId, done(id));
        }
        topology.send(runId, responseDone(ResponseStatus.COMPLETE));
    }

    private static Properties retention() {
        Properties props = new Properties();
        props.setProperty(TopologyConfig.ITEM_STATE_RETENTION_MS, String.valueOf(RETENTION.toMillis()));
        // the open turn stays open all along
        props.setProperty(TopologyConfig.IDLE_TIMEOUT_MS, String.valueOf(Duration.ofDays(1).toMillis()));
        return props;
    }
}
