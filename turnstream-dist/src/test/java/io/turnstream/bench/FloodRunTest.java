package io.turnstream.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.bench.BenchResults.FloodResult;
import io.turnstream.model.ChangeType;
import io.turnstream.model.Json;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiItemType;
import io.turnstream.model.UiPayload;
import io.turnstream.model.UiPayloadType;
import io.turnstream.model.UpsertEnvelope;
import org.junit.jupiter.api.Test;

class FloodRunTest {

    @Test
    void aTurnsEndIsReadFromThePayloadsTypeAlone() throws Exception {
        assertThat(FloodRun.closesTurn(envelope(new UITurnEvent(UiPayloadType.TURN_COMPLETED, "t1", "th", "m", "p",
                ResponseStatus.COMPLETE, null, null)))).isTrue();
        assertThat(FloodRun.closesTurn(envelope(new UITurnEvent(UiPayloadType.TURN_ERROR, "t1", "th", "m", "p",
                ResponseStatus.ERROR, null, null)))).isTrue();
        assertThat(FloodRun.closesTurn(envelope(new UITurnEvent(UiPayloadType.TURN_STARTED, "t1", "th", "m", "p",
                null, null, null)))).isFalse();
    }

    @Test
    void anItemWhoseTextLooksLikeAnEndDoesNotEndItsTurn() throws Exception {
        String text = "{\"payload\":{\"type\":\"turn_completed\"}} \"type\": \"turn_error\"";

        assertThat(FloodRun.closesTurn(envelope(UIUpsert.text("t1", "th", "i1", UiItemType.MESSAGE, ChangeType.UPDATED,
                3, text, null, null)))).isFalse();
    }

    @Test
    void aWindowHalfSpentCompilingHasNotSettled() {
        assertThat(FloodRun.jitShare(run(2.0, 1000))).isEqualTo(0.5);
        assertThat(FloodRun.jitShare(run(2.0, 1000))).isGreaterThan(FloodRun.SETTLED_JIT_SHARE);
        assertThat(FloodRun.jitShare(run(2.0, 300))).isLessThan(FloodRun.SETTLED_JIT_SHARE);
    }

    private static FloodResult run(double seconds, double jitMs) {
        return new FloodResult(FloodRun.TOPOLOGY, -1, 1000, seconds, 1000 / seconds, 10, 10 / seconds, 1, jitMs, 0, 0, 0L);
    }

    private static byte[] envelope(UiPayload payload) {
        return Json.toBytes(new UpsertEnvelope("e1", 1L, "t1", 1, payload.payloadType(), payload, "tenant"));
    }
}
