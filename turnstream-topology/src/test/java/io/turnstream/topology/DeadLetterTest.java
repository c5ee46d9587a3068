package io.turnstream.topology;

import static io.turnstream.topology.Events.delta;
import static io.turnstream.topology.Events.done;
import static io.turnstream.topology.Events.itemStart;
import static io.turnstream.topology.Events.responseDone;
import static io.turnstream.topology.Events.responseStart;
import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.ResponseStatus;
import io.turnstream.topology.TopologyHarness.DeadLetter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Bad input never stops the topology or touches other turns: each case goes to the dead-letter
 * topic with its original bytes and a reason, and is counted.
 */
class DeadLetterTest {

    private final TopologyHarness topology = new TopologyHarness();

    @AfterEach
    void close() {
        topology.close();
    }

    @Test
    void everyKindOfBadInputIsDeadLetteredWithItsReasonWhileAGoodTurnCarriesOn() {
        topology.send("good", responseStart("turn-good", "anthropic"));
        topology.send("good", itemStart("msg", "message"));
        topology.send("good", delta("msg", "first half"));

        topology.sendRaw("bad-1", "{not json");
        topology.sendRaw("bad-2", "{\"run_id\":\"bad-2\",\"type\":\"item_delta\",\"payload\":{\"type\":\"no_such_event\"}}");
        topology.sendRaw("bad-3", "{\"run_id\":\"bad-3\",\"type\":\"item_delta\"}");
        topology.send("never-started", delta("msg", "orphan"));
        topology.send("good", delta("no-such-item", "lost"));
        topology.send("good", itemStart("msg", "message"));
        topology.send("good", responseStart("turn-good", "anthropic"));
        topology.send("good", itemStart("odd", "hologram"));
        topology.sendRaw("other-key", "{\"run_id\":\"good\",\"type\":\"item_delta\",\"payload\":{\"type\":\"item_delta\",\"item_id\":\"msg\",\"delta_content\":\"x\"}}");

        topology.send("good", delta("msg", ", second half"));
        topology.send("good", done("msg"));
        topology.send("good", done("msg"));
        topology.send("good", responseDone(ResponseStatus.COMPLETE));
        topology.send("good", delta("msg", "after close"));

        assertThat(topology.deadLetters()).extracting(DeadLetter::key, DeadLetter::reason).containsExactly(
                tuple("bad-1", "unparseable StreamEvent: Unexpected character ('n' (code 110)): "
                        + "was expecting double-quote to start field name"),
                tuple("bad-2", "unparseable StreamEvent: Could not resolve type id 'no_such_event' as a subtype of "
                        + "`io.turnstream.model.StreamPayload`: known type ids = [item_cancelled, item_delta, item_done, "
                        + "item_error, item_start, item_withdrawn, response_done, response_error, response_start, tool_status, turn_status] (for POJO property 'payload')"),
                tuple("bad-3", "StreamEvent without payload"),
                tuple("never-started", "item_delta before response_start: no open turn for run never-started"),
                tuple("good", "item_delta for unknown item no-such-item"),
                tuple("good", "duplicate item_start for item msg"),
                tuple("good", "duplicate response_start"),
                tuple("good", "item_start with unknown item_type 'hologram' for item odd"),
                tuple("other-key", "record key 'other-key' differs from run_id 'good'"),
                tuple("good", "item_done for item msg which already finished"),
                tuple("good", "item_delta after the turn closed"));
        assertThat(topology.deadLetterTotal()).isEqualTo(11.0);
        assertThat(topology.emitted()).containsExactly(
                "turn_started",
                "message created v1 origin=agent \"first half\"",
                "message completed v2 origin=agent \"first half, second half\"",
                "turn_completed complete");
    }

    @Test
    void theDeadLetterKeepsTheOriginalBytes() {
        topology.sendRaw("bad", "{not json at all");

        DeadLetter letter = topology.deadLetters().get(0);
        assertThat(letter.value()).isEqualTo("{not json at all");
        assertThat(letter.reason()).startsWith("unparseable StreamEvent: ").hasSizeGreaterThan(30);
    }

    private static org.assertj.core.groups.Tuple tuple(String key, String reason) {
        return org.assertj.core.groups.Tuple.tuple(key, reason);
    }
}
