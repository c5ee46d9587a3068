package io.turnstream.topology;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.serialization.Serde;
import org.junit.jupiter.api.Test;

class StateSerdeTest {

    @Test
    void theLastActivityTimesStayInMemoryAndAreNotStored() {
        Serde<TurnState> turns = StateSerde.of(TurnState.class);
        TurnState turn = new TurnState();
        turn.runId = "run-1";
        turn.seq = 4;
        turn.lastEventMs = 1_700_000_000_000L;
        turn.openItems = 2;
        byte[] storedTurn = turns.serializer().serialize("turns", turn);
        TurnState readTurn = turns.deserializer().deserialize("turns", storedTurn);

        Serde<ItemState> items = StateSerde.of(ItemState.class);
        ItemState item = new ItemState();
        item.itemId = "msg";
        item.version = 2;
        item.lastDeltaMs = 1_700_000_000_000L;
        byte[] storedItem = items.serializer().serialize("items", item);
        ItemState readItem = items.deserializer().deserialize("items", storedItem);

        assertThat(new String(storedTurn, StandardCharsets.UTF_8)).doesNotContain("lastEventMs");
        assertThat(readTurn.seq).isEqualTo(4);
        assertThat(readTurn.lastEventMs).isZero();
        assertThat(new String(storedTurn, StandardCharsets.UTF_8)).doesNotContain("openItems");
        assertThat(readTurn.openItems).as("read back: uncounted").isEqualTo(TurnState.UNCOUNTED);
        assertThat(new String(storedItem, StandardCharsets.UTF_8)).doesNotContain("lastDeltaMs");
        assertThat(readItem.version).isEqualTo(2);
        assertThat(readItem.lastDeltaMs).isZero();
    }
}
