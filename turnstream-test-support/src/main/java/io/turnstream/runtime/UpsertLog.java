package io.turnstream.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.ChangeType;
import io.turnstream.model.Json;
import io.turnstream.model.Topics;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiPayloadType;
import io.turnstream.model.UpsertEnvelope;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * {@code llm.upserts} as a UI client sees it ({@code read_committed}), grouped by turn, with the
 * checks of the contract's guarantees: every upsert once, {@code seq} contiguous from 1 in order,
 * each item's {@code version} contiguous, content only growing, final content as streamed.
 */
public final class UpsertLog implements AutoCloseable {

    private final CommittedReader reader;

    public UpsertLog(String bootstrapServers) {
        this.reader = new CommittedReader(bootstrapServers, Topics.DEFAULTS.upserts());
    }

    /** The turn's upserts read so far, in the order they were read. */
    public List<UpsertEnvelope> turn(String turnId) {
        return ofTurn(parse(reader.poll()), turnId);
    }

    /** Waits until the turn has at least {@code count} item upserts. */
    public List<UpsertEnvelope> awaitItemUpserts(String turnId, int count, Duration timeout) {
        reader.awaitUntil(timeout, records -> itemUpserts(ofTurn(parse(records), turnId)) >= count);
        return turn(turnId);
    }

    /** Waits until the turn has closed (turn_completed or turn_error). */
    public List<UpsertEnvelope> awaitEnd(String turnId, Duration timeout) {
        reader.awaitUntil(timeout, records -> ofTurn(parse(records), turnId).stream().anyMatch(UpsertLog::endsTurn));
        return turn(turnId);
    }

    public static long itemUpserts(List<UpsertEnvelope> turn) {
        return turn.stream().filter(e -> e.payload() instanceof UIUpsert).count();
    }

    /**
     * The guarantees of the contract for one finished turn: seq 1..n once each and in order, the turn
     * started first and ended last, and every streamed item of the script completed with exactly
     * the concatenation of its deltas, its versions contiguous and its content never shrinking.
     */
    public static void assertExactlyOnceAndComplete(List<UpsertEnvelope> turn, TurnScript script, String... itemIds) {
        assertThat(turn).as("upserts of turn %s", script.turnId()).isNotEmpty();
        assertThat(turn.stream().map(UpsertEnvelope::seq).toList())
                .as("seq of turn %s: contiguous from 1, each once, in order", script.turnId())
                .containsExactlyElementsOf(LongStream.rangeClosed(1, turn.size()).boxed().toList());
        assertThat(turn.get(0).payload().type()).isEqualTo(UiPayloadType.TURN_STARTED);
        assertThat(turn.get(turn.size() - 1).payload().type()).isEqualTo(UiPayloadType.TURN_COMPLETED);
        Map<String, List<UIUpsert>> byItem = turn.stream()
                .filter(e -> e.payload() instanceof UIUpsert)
                .map(e -> (UIUpsert) e.payload())
                .collect(Collectors.groupingBy(UIUpsert::itemId));
        for (String itemId : itemIds) {
            List<UIUpsert> upserts = byItem.get(itemId);
            assertThat(upserts).as("upserts of item %s", itemId).isNotEmpty();
            assertThat(upserts.stream().map(UIUpsert::version).toList())
                    .as("versions of item %s", itemId)
                    .containsExactlyElementsOf(LongStream.rangeClosed(1, upserts.size()).boxed().toList());
            for (int i = 1; i < upserts.size(); i++) {
                assertThat(upserts.get(i).content()).as("content of item %s only grows", itemId)
                        .startsWith(upserts.get(i - 1).content());
            }
            UIUpsert last = upserts.get(upserts.size() - 1);
            assertThat(last.changeType()).isEqualTo(ChangeType.COMPLETED);
            assertThat(last.content()).as("final content of item %s", itemId).isEqualTo(script.expectedContent(itemId));
        }
    }

    @Override
    public void close() {
        reader.close();
    }

    private static List<UpsertEnvelope> parse(List<ConsumerRecord<String, String>> records) {
        return records.stream().map(r -> Json.fromString(r.value(), UpsertEnvelope.class)).toList();
    }

    private static List<UpsertEnvelope> ofTurn(List<UpsertEnvelope> all, String turnId) {
        return all.stream().filter(e -> turnId.equals(e.turnId())).toList();
    }

    private static boolean endsTurn(UpsertEnvelope envelope) {
        UiPayloadType type = envelope.payload().type();
        return type == UiPayloadType.TURN_COMPLETED || type == UiPayloadType.TURN_ERROR;
    }
}
