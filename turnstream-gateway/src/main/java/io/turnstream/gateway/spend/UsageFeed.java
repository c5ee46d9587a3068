package io.turnstream.gateway.spend;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.model.Json;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.Topics;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UiPayloadType;
import io.turnstream.model.UpsertEnvelope;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.TopicReader;
import java.io.IOException;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * Feeds {@link TenantUsage} from Kafka, so every gateway instance counts the same turns and the same
 * usage: {@code llm.turn-requests} ({@code request} records start a turn, {@code step} records carry the
 * turn's usage so far, failed model calls included) and {@code llm.upserts} ({@code turn_completed} /
 * {@code turn_error} end it, with its final usage). Reads from the start of the UTC day (or
 * {@link SpendLimits#lookback()} ago, if earlier), so a gateway that starts knows the day's spend.
 */
public final class UsageFeed implements AutoCloseable {

    private final String turnRequestsTopic;
    private final WireFormat format;
    private final TenantUsage usage;
    private final TopicReader reader;

    private UsageFeed(Properties kafka, Topics topics, WireFormat format, TenantUsage usage, Instant from) {
        this.turnRequestsTopic = topics.turnRequests();
        this.format = format;
        this.usage = usage;
        this.reader = TopicReader.reading("turnstream-gateway-usage", kafka, List.of(topics.turnRequests(), topics.upserts()))
                .from(TopicReader.Start.since(from)).start((record, polledAt) -> read(record));
    }

    public static UsageFeed start(Properties kafka, Topics topics, WireFormat format, TenantUsage usage,
                                  SpendLimits limits, Clock clock) {
        Instant now = clock.instant();
        Instant dayStart = now.atZone(ZoneOffset.UTC).truncatedTo(ChronoUnit.DAYS).toInstant();
        Instant lookback = now.minus(limits.lookback());
        return new UsageFeed(kafka, topics, format, usage, lookback.isBefore(dayStart) ? lookback : dayStart);
    }

    private void read(ConsumerRecord<String, byte[]> record) throws IOException {
        if (record.topic().equals(turnRequestsTopic)) {
            TurnRequestRecord request = format.read(record.topic(), record.value(), TurnRequestRecord.class);
            if (request.turnId() == null) {
                throw new IllegalArgumentException("a turn request needs a turn id");
            }
            if (request.startsTurn()) {
                usage.requested(request.tenantId(), request.turnId(), request.requestedAt());
            } else if (request.checkpoint() != null) {
                StreamPayload.Usage sum = plus(usageAt(request.checkpoint(), "usage"),
                        usageAt(request.checkpoint(), "failedUsage"));
                if (sum != null) {
                    usage.used(request.tenantId(), request.turnId(), sum.totalTokens(), cost(sum.costUsd()),
                            record.timestamp());
                }
            }
            return;
        }
        UpsertEnvelope envelope = format.read(record.topic(), record.value(), UpsertEnvelope.class);
        if (!(envelope.payload() instanceof UITurnEvent event) || event.type() == UiPayloadType.TURN_STARTED) {
            return;
        }
        String turnId = envelope.turnId() != null ? envelope.turnId() : record.key();
        String tenantId = event.tenantId() != null ? event.tenantId() : envelope.tenantId();
        usage.ended(tenantId, turnId, event, record.timestamp());
    }

    private static StreamPayload.Usage usageAt(JsonNode checkpoint, String field) throws IOException {
        JsonNode node = checkpoint.get(field);
        return node == null || node.isNull() ? null : Json.MAPPER.treeToValue(node, StreamPayload.Usage.class);
    }

    private static StreamPayload.Usage plus(StreamPayload.Usage a, StreamPayload.Usage b) {
        return a == null || b == null ? (a == null ? b : a) : a.plus(b);
    }

    private static double cost(Double costUsd) {
        return costUsd == null ? 0 : costUsd;
    }

    /** Completes once the turns and usage that were on Kafka at start are counted. */
    public CompletableFuture<Void> caughtUp() {
        return reader.caughtUp();
    }

    public boolean healthy() {
        return reader.healthy();
    }

    @Override
    public void close() {
        reader.close();
    }
}
