package io.turnstream.gateway.view;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.model.ChangeType;
import io.turnstream.model.ErrorInfo;
import io.turnstream.model.ItemAppend;
import io.turnstream.model.Json;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.ToolState;
import io.turnstream.model.Topics;
import io.turnstream.model.UIStatus;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiItemType;
import io.turnstream.model.UiPayload;
import io.turnstream.model.UiPayloadType;
import io.turnstream.model.UpsertEnvelope;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * One turn's records written as the topology writes them: upserts to {@code llm.upserts} and
 * {@code llm.item-state}, appends to {@code llm.item-appends}, each seq counted per turn, so a test
 * controls every seq and offset. Each write is flushed before it returns.
 */
public final class TurnRecords {

    public final String id = "turn-" + UUID.randomUUID();
    public final String threadId;
    /** The turn's tenant, null for none. */
    private final String tenantId;
    private final KafkaProducer<String, String> producer;
    private final Map<String, Long> versions = new HashMap<>();
    private long seq;
    private long appendSeq;

    public TurnRecords(KafkaProducer<String, String> producer, String threadId) {
        this(producer, threadId, null);
    }

    public TurnRecords(KafkaProducer<String, String> producer, String threadId, String tenantId) {
        this.producer = producer;
        this.threadId = threadId;
        this.tenantId = tenantId;
    }

    public void started() {
        publish(new UITurnEvent(UiPayloadType.TURN_STARTED, id, threadId, "model", "simulated", null, null, null,
                tenantId), "turn");
    }

    public void completed() {
        publish(new UITurnEvent(UiPayloadType.TURN_COMPLETED, id, threadId, "model", "simulated", ResponseStatus.COMPLETE,
                new UITurnEvent.Usage(1, 2, 3), null, tenantId, "stop"), "turn");
    }

    /** The turn was cancelled. */
    public void aborted() {
        publish(new UITurnEvent(UiPayloadType.TURN_COMPLETED, id, threadId, "model", "simulated", ResponseStatus.ABORTED,
                new UITurnEvent.Usage(1, 2, 3), null, tenantId, null), "turn");
    }

    /** The turn failed after a completed step and a failed model call: its usage and the failed call's, apart. */
    public void failed(String code, String message) {
        publish(new UITurnEvent(UiPayloadType.TURN_ERROR, id, threadId, null, null, null, new UITurnEvent.Usage(1, 2, 3),
                ErrorInfo.of(code, message), tenantId, null, new UITurnEvent.Usage(4, 0, 4)), "turn");
    }

    public void message(String itemId, String content, ChangeType changeType) {
        item(itemId, UiItemType.MESSAGE, content, changeType);
    }

    /**
     * A message upsert on {@code llm.upserts} whose {@code llm.item-state} record is held back: as when the gateway's
     * item-state view lags its live feed. Running what it returns writes that record.
     */
    public Runnable messageHoldingItsState(String itemId, String content, ChangeType changeType) {
        long version = versions.merge(itemId, 1L, Long::sum);
        String json = nextEnvelope(UIUpsert.text(id, threadId, itemId, UiItemType.MESSAGE, changeType, version, content,
                "agent", null));
        producer.send(new ProducerRecord<>(Topics.DEFAULTS.upserts(), id, json));
        producer.flush();
        return () -> {
            producer.send(new ProducerRecord<>(Topics.DEFAULTS.itemState(), id + "/" + itemId, json));
            producer.flush();
        };
    }

    /** The summary a compaction put in place of the earlier conversation. */
    public void compactionSummary(String itemId, String summary) {
        long version = versions.merge(itemId, 1L, Long::sum);
        publish(UIUpsert.text(id, threadId, itemId, UiItemType.MESSAGE, ChangeType.COMPLETED, version, summary, "compaction",
                null), itemId);
    }

    public void reasoning(String itemId, String content, ChangeType changeType) {
        item(itemId, UiItemType.REASONING, content, changeType);
    }

    public void toolCall(String itemId, String callId, String toolName, String arguments) {
        upsert(itemId, UiItemType.TOOL_CALL, arguments, toolName, Json.fromString(arguments, JsonNode.class), callId, null, null);
    }

    public void toolOutput(String itemId, String callId, String toolName, String output, boolean success) {
        upsert(itemId, UiItemType.TOOL_OUTPUT, output, toolName, null, callId, Json.MAPPER.getNodeFactory().textNode(output),
                success);
    }

    /** As the topology takes back an item of a failed model call: an upsert, and a tombstone for its state. */
    public void withdrawn(String itemId, UiItemType type) {
        long version = versions.merge(itemId, 1L, Long::sum);
        String json = nextEnvelope(UIUpsert.withdrawn(id, threadId, itemId, type, version, null));
        producer.send(new ProducerRecord<>(Topics.DEFAULTS.upserts(), id, json));
        producer.send(new ProducerRecord<>(Topics.DEFAULTS.itemState(), id + "/" + itemId, null));
        producer.flush();
    }

    /** A tool call's status, as the topology passes the gateway's {@code tool_status} on. */
    public void toolStatus(String itemId, String callId, String toolName, ToolState status, ErrorInfo error) {
        publish(UIStatus.ofTool(id, threadId, new StreamPayload.ToolStatus(itemId, callId, toolName, status, null, null,
                error)), "tool-status/" + callId);
    }

    /** The seqs of the last upsert and the last append written of the turn; 0 for none. */
    public StreamPosition written() {
        return new StreamPosition(seq, appendSeq);
    }

    public void append(String itemId, long offset, String text) {
        appendSeq++;
        String json = Json.toString(new ItemAppend(id, itemId, appendSeq, offset, text, System.currentTimeMillis()));
        producer.send(new ProducerRecord<>(Topics.DEFAULTS.itemAppends(), id, json));
        producer.flush();
    }

    private void item(String itemId, UiItemType type, String content, ChangeType changeType) {
        long version = versions.merge(itemId, 1L, Long::sum);
        publish(UIUpsert.text(id, threadId, itemId, type, changeType, version, content, "agent", null), itemId);
    }

    private void upsert(String itemId, UiItemType type, String content, String toolName, JsonNode arguments, String callId,
                        JsonNode output, Boolean success) {
        long version = versions.merge(itemId, 1L, Long::sum);
        publish(new UIUpsert(UiPayloadType.ITEM_UPSERT, id, threadId, itemId, type, ChangeType.COMPLETED, version, content, "agent",
                null, toolName, arguments, callId, output, success, null, null), itemId);
    }

    private void publish(UiPayload payload, String stateKey) {
        String json = nextEnvelope(payload);
        producer.send(new ProducerRecord<>(Topics.DEFAULTS.upserts(), id, json));
        producer.send(new ProducerRecord<>(Topics.DEFAULTS.itemState(), id + "/" + stateKey, json));
        producer.flush();
    }

    /** The payload in the turn's next envelope (the next seq), as JSON. */
    private String nextEnvelope(UiPayload payload) {
        seq++;
        return Json.toString(new UpsertEnvelope(UUID.randomUUID().toString(), System.currentTimeMillis(), id, seq,
                payload.payloadType(), payload));
    }
}
