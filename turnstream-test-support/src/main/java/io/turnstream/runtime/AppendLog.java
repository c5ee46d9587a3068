package io.turnstream.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.ItemAppend;
import io.turnstream.model.Json;
import io.turnstream.model.Topics;
import java.time.Duration;
import java.util.List;
import java.util.stream.LongStream;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * {@code llm.item-appends} as a live client sees it ({@code read_committed}), with the checks of its
 * guarantees: every append once, {@code seq} contiguous from 1 per turn, each item's offsets
 * contiguous, and its appends together exactly its streamed content.
 */
public final class AppendLog implements AutoCloseable {

    private final CommittedReader reader;

    public AppendLog(String bootstrapServers) {
        this.reader = new CommittedReader(bootstrapServers, Topics.DEFAULTS.itemAppends());
    }

    /** Waits until the item's appends reach {@code codePoints} code points of text; returns the turn's appends. */
    public List<ItemAppend> awaitText(String turnId, String itemId, long codePoints, Duration timeout) {
        reader.awaitUntil(timeout, records -> ofTurn(records, turnId).stream().filter(a -> a.itemId().equals(itemId))
                .mapToLong(a -> a.offset() + a.text().codePointCount(0, a.text().length())).max().orElse(0) >= codePoints);
        return ofTurn(reader.poll(), turnId);
    }

    public static void assertExactlyOnceAndContiguous(List<ItemAppend> turn, TurnScript script, String itemId) {
        assertThat(turn.stream().map(ItemAppend::seq).toList())
                .as("append seq of turn %s: contiguous from 1, each once, in order", script.turnId())
                .containsExactlyElementsOf(LongStream.rangeClosed(1, turn.size()).boxed().toList());
        StringBuilder text = new StringBuilder();
        for (ItemAppend append : turn.stream().filter(a -> a.itemId().equals(itemId)).toList()) {
            assertThat(append.offset()).as("offset of append %d", append.seq())
                    .isEqualTo(text.codePointCount(0, text.length()));
            text.append(append.text());
        }
        assertThat(text.toString()).as("appends of item %s", itemId).isEqualTo(script.expectedContent(itemId));
    }

    @Override
    public void close() {
        reader.close();
    }

    private static List<ItemAppend> ofTurn(List<ConsumerRecord<String, String>> records, String turnId) {
        return records.stream().filter(r -> turnId.equals(r.key()))
                .map(r -> Json.fromString(r.value(), ItemAppend.class)).toList();
    }
}
