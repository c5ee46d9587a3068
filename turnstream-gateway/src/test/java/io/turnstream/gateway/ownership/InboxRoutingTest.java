package io.turnstream.gateway.ownership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.gateway.loop.ApprovalDecisions;
import io.turnstream.gateway.loop.GatewayMetrics;
import io.turnstream.gateway.loop.TurnRegistry;
import io.turnstream.gateway.turn.TurnPhase;
import io.turnstream.gateway.turn.TurnStatus;
import io.turnstream.model.ControlMessage;
import io.turnstream.model.Json;
import io.turnstream.model.ToolResult;
import io.turnstream.model.Topics;
import io.turnstream.model.WireFormat;
import io.turnstream.schema.RegistryOutage;
import io.turnstream.schema.SchemaRegistryException;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/** Where the inbox's records go, without a broker. */
class InboxRoutingTest {

    private static final Topics TOPICS = Topics.DEFAULTS;

    private final TurnRegistry registry = new TurnRegistry();
    private final ApprovalDecisions approvals = new ApprovalDecisions();
    private final GatewayMetrics metrics = new GatewayMetrics();
    private final InboxRouting routing = new InboxRouting(TOPICS, WireFormat.JSON, registry, approvals, metrics);

    @Test
    void aToolResultReachesItsRunningTurnByTheTurnIdItCarriesOrItsKey() {
        TurnRegistry.ActiveTurn turn = registry.register(running("turn-1"));
        ToolResult keyed = new ToolResult("call-1", null, "read_file", true, TextNode.valueOf("ok"), null, 1, 2);

        routing.route(record(TOPICS.toolResults(), "turn-1", Json.toBytes(keyed)));

        assertThat(turn.result("call-1")).isCompletedWithValue(keyed);
        assertThat(metrics.get(GatewayMetrics.Counter.TOOL_RESULTS_RECEIVED)).isEqualTo(1);
    }

    @Test
    void anAskReachesTheTurnAndOpensARoundWhoseFirstDecisionStands() {
        TurnRegistry.ActiveTurn turn = registry.register(running("turn-1"));

        routing.route(control(ControlMessage.approvalRequested("turn-1", "call-1", "write_file",
                Json.MAPPER.createObjectNode(), ControlMessage.ASK_POLICY)));
        routing.route(control(ControlMessage.approval("turn-1", "call-1", false, "no")));
        routing.route(control(ControlMessage.approval("turn-1", "call-1", true, "yes")));

        assertThat(turn.awaitingApproval("call-1")).isDone();
        assertThat(approvals.round("turn-1", "call-1").decision)
                .isCompletedWithValue(new ApprovalDecisions.Decision(false, "no"));
    }

    @Test
    void aCancelStopsItsTurnOrWaitsForItToStartAndAStartMarkerIsPassedOn() {
        TurnRegistry.ActiveTurn turn = registry.register(running("turn-1"));

        routing.route(control(ControlMessage.toolStarted("turn-1", "call-1", 42)));
        routing.route(control(ControlMessage.cancel("turn-1", "stop")));
        routing.route(control(ControlMessage.cancel("turn-2", "early")));

        assertThat(turn.started("call-1")).isCompletedWithValue(42L);
        assertThat(turn.cancel.reason()).isEqualTo("stop");
        assertThat(registry.register(running("turn-2")).cancel.reason()).isEqualTo("early");
    }

    @Test
    void unreadableRecordsAreCountedAndSkippedAndTheNextOneStillArrives() {
        TurnRegistry.ActiveTurn turn = registry.register(running("turn-1"));

        routing.route(record(TOPICS.control(), "turn-1", "{not json".getBytes(StandardCharsets.UTF_8)));
        routing.route(record(TOPICS.toolResults(), null, Json.toBytes(
                new ToolResult("call-1", null, "t", true, TextNode.valueOf(""), null, 1, 1))));
        routing.route(control(ControlMessage.cancel("turn-1", "stop")));

        assertThat(metrics.get(GatewayMetrics.Counter.BAD_INPUT_RECORDS)).isEqualTo(2);
        assertThat(turn.cancel.isCancelled()).isTrue();
    }

    /**
     * A cancel or a tool result read while the schema registry cannot be reached is not the record's fault: it is
     * neither counted nor skipped but thrown to the inbox's reader, which reads it again after a backoff; then it
     * arrives.
     */
    @Test
    void aRecordReadWhileTheSchemaRegistryIsDownIsThrownToTheReaderAndArrivesWhenReadAgain() {
        RegistryOutage format = new RegistryOutage();
        InboxRouting inbox = new InboxRouting(TOPICS, format, registry, approvals, metrics);
        TurnRegistry.ActiveTurn turn = registry.register(running("turn-1"));
        ToolResult result = new ToolResult("call-1", "turn-1", "read_file", true, TextNode.valueOf("ok"), null, 1, 2);
        ConsumerRecord<String, byte[]> cancel = control(ControlMessage.cancel("turn-1", "stop"));
        ConsumerRecord<String, byte[]> toolResult = record(TOPICS.toolResults(), "turn-1", Json.toBytes(result));

        format.down = true;
        assertThatThrownBy(() -> inbox.route(toolResult)).isInstanceOf(SchemaRegistryException.class);
        assertThatThrownBy(() -> inbox.route(cancel)).isInstanceOf(SchemaRegistryException.class);

        assertThat(metrics.get(GatewayMetrics.Counter.BAD_INPUT_RECORDS)).as("not an unreadable record").isZero();
        assertThat(turn.result("call-1")).isNotDone();
        assertThat(turn.cancel.isCancelled()).isFalse();

        format.down = false;
        inbox.route(toolResult);
        inbox.route(cancel);

        assertThat(turn.result("call-1")).isCompletedWithValue(result);
        assertThat(turn.cancel.reason()).isEqualTo("stop");
    }

    private static TurnStatus running(String turnId) {
        return new TurnStatus(turnId, "thread-1", "run-" + turnId, TurnPhase.RUNNING);
    }

    private static ConsumerRecord<String, byte[]> control(ControlMessage message) {
        return record(TOPICS.control(), message.turnId(), Json.toBytes(message));
    }

    private static ConsumerRecord<String, byte[]> record(String topic, String key, byte[] value) {
        return new ConsumerRecord<>(topic, 0, 0, key, value);
    }
}
