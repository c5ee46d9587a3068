package io.turnstream.topology;

import io.turnstream.model.ToolCall;
import io.turnstream.model.UIStatus;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiPayload;
import io.turnstream.model.UiPayloadType;
import io.turnstream.model.UpsertEnvelope;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.TenantClaims;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.StringJoiner;
import java.util.UUID;
import java.util.function.LongSupplier;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.streams.processor.api.Record;

/**
 * Wraps payloads in envelopes with the turn's next {@code seq} and forwards them: every envelope to
 * {@code llm.upserts} (keyed by turn id) and to {@code llm.item-state} (keyed by item), tool calls to
 * {@code llm.tool-calls}. The envelope timestamp, like the record's, is the emit time.
 */
final class UpsertEmitter {

    private final Sinks sinks;
    private final LongSupplier clock;
    private final TopologyConfig config;
    private final MessageDigest md5;

    UpsertEmitter(Sinks sinks, LongSupplier clock, TopologyConfig config) {
        this.sinks = sinks;
        this.clock = clock;
        this.config = config;
        try {
            this.md5 = MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has MD5", e);
        }
    }

    void emit(TurnState turn, UiPayload payload) {
        long now = clock.getAsLong();
        long seq = turn.nextSeq();
        if (payload instanceof UIStatus status && status.type() == UiPayloadType.TOOL_STATUS) {
            turn.toolStatusKeys.add(status.stateKey());
        }
        UpsertEnvelope envelope = new UpsertEnvelope(eventId(turn.turnId, seq), now, turn.turnId, seq,
                payload.payloadType(), payload, turn.tenantId);
        byte[] upsertBytes = config.wireFormat().write(config.topics().upserts(), envelope);
        sinks.send(UpsertTopology.UPSERTS_SINK, new Record<>(turn.turnId, upsertBytes, now, TurnTrace.headers(turn)));
        // JSON does not depend on the topic: the same bytes serve both (Avro registers a subject per topic).
        byte[] stateBytes = config.wireFormat() == WireFormat.JSON ? upsertBytes
                : config.wireFormat().write(config.topics().itemState(), envelope);
        sinks.send(UpsertTopology.ITEM_STATE_SINK, new Record<>(itemStateKey(turn.turnId, payload), stateBytes, now, TurnTrace.headers(turn)));
    }

    /**
     * A {@code withdrawn} upsert goes to {@code llm.upserts} only: on {@code llm.item-state} the item's
     * key, and its tool status' for a call, get tombstones instead, so no reader of the state sees it.
     */
    void withdraw(TurnState turn, UIUpsert withdrawn) {
        long now = clock.getAsLong();
        long seq = turn.nextSeq();
        UpsertEnvelope envelope = new UpsertEnvelope(eventId(turn.turnId, seq), now, turn.turnId, seq,
                withdrawn.payloadType(), withdrawn, turn.tenantId);
        sinks.send(UpsertTopology.UPSERTS_SINK, new Record<>(turn.turnId,
                config.wireFormat().write(config.topics().upserts(), envelope), now, TurnTrace.headers(turn)));
        StringJoiner keys = new StringJoiner("\n").add(itemStateKey(turn.turnId, withdrawn));
        if (withdrawn.callId() != null) {
            keys.add(turn.turnId + "/tool-status/" + withdrawn.callId());
        }
        tombstones(keys.toString());
    }

    void publish(TurnState turn, ToolCall call) {
        byte[] bytes = config.wireFormat().write(config.topics().toolCalls(), call);
        Headers headers = TurnTrace.headers(turn);
        if (turn.tenantClaim != null) {
            // the executor checks the gateway's claim itself before it runs the call in the tenant's workspace
            headers.add(TenantClaims.HEADER, turn.tenantClaim.getBytes(StandardCharsets.UTF_8));
        }
        sinks.send(UpsertTopology.TOOL_CALLS_SINK, new Record<>(call.turnId(), bytes, call.requestedAt(), headers));
    }

    /**
     * The {@code llm.item-state} keys of a closed turn, as one deadline target: its items', its
     * lifecycle's, its status's and its tools' statuses', newline-separated (ids hold no newline:
     * they are keys of JSON records). A key the turn never wrote gets a harmless tombstone.
     */
    static String itemStateKeys(TurnState turn) {
        StringJoiner keys = new StringJoiner("\n");
        turn.finishedItems.forEach(itemId -> keys.add(turn.turnId + "/" + itemId));
        turn.toolStatusKeys.forEach(key -> keys.add(turn.turnId + "/" + key));
        return keys.add(turn.turnId + "/turn").add(turn.turnId + "/status").toString();
    }

    /** Deletes every key of {@link #itemStateKeys} from the compacted {@code llm.item-state}. */
    void tombstones(String itemStateKeys) {
        long now = clock.getAsLong();
        for (String key : itemStateKeys.split("\n")) {
            sinks.send(UpsertTopology.ITEM_STATE_SINK, new Record<>(key, (byte[]) null, now));
        }
    }

    /** {@code {turnId}/{itemId}} for items, {@code {turnId}/turn} for the turn's lifecycle, and so on: {@link UiPayload#stateKey()}. */
    static String itemStateKey(String turnId, UiPayload payload) {
        return turnId + "/" + payload.stateKey();
    }

    /**
     * Deterministic per (turn, seq), so a consumer that sees an id twice knows it is the same record:
     * {@link UUID#nameUUIDFromBytes} of {@code turnId#seq}, computed with this emitter's own digest
     * (looking one up per upsert was a visible cost of emitting).
     */
    String eventId(String turnId, long seq) {
        byte[] hash = md5.digest((turnId + "#" + seq).getBytes(StandardCharsets.UTF_8));
        hash[6] = (byte) (hash[6] & 0x0f | 0x30);
        hash[8] = (byte) (hash[8] & 0x3f | 0x80);
        ByteBuffer bits = ByteBuffer.wrap(hash);
        return new UUID(bits.getLong(), bits.getLong()).toString();
    }

    static UITurnEvent.Usage usage(io.turnstream.model.StreamPayload.Usage usage) {
        return usage == null ? null
                : new UITurnEvent.Usage(usage.promptTokens(), usage.completionTokens(), usage.totalTokens(),
                        usage.cacheReadTokens(), usage.cacheWriteTokens(), usage.reasoningTokens(), usage.costUsd());
    }
}
