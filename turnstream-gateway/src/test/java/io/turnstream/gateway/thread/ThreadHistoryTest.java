package io.turnstream.gateway.thread;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.turnstream.model.Json;
import io.turnstream.model.Topics;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.model.WireFormat;
import io.turnstream.schema.RegistryOutage;
import io.turnstream.schema.SchemaRegistryException;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/** How {@link ThreadHistory} reads a thread's records, without a broker (the whole rebuild: {@link ThreadTurnsTest}). */
class ThreadHistoryTest {

    private static final String TOPIC = Topics.DEFAULTS.turnRequests();

    /**
     * An earlier turn's record read while the schema registry cannot be reached is not left out of the conversation
     * as an unreadable one: the registry's exception goes to the turn (which runs once its partition is taken over
     * again). A record that cannot be read is left out as before.
     */
    @Test
    void aRecordReadWhileTheSchemaRegistryIsDownIsNotLeftOutAsUnreadable() {
        RegistryOutage format = new RegistryOutage();
        ThreadHistory history = new ThreadHistory(null, null, format, request -> "simulated");
        TurnRequestRecord earlier = TurnRequestRecord.request("turn-1", "thread-1", "run-1", "acme", 1,
                Json.MAPPER.createObjectNode().put("prompt", "hi"));
        ConsumerRecord<String, byte[]> record = new ConsumerRecord<>(TOPIC, 0, 3L, "thread-1",
                WireFormat.JSON.write(TOPIC, earlier));
        ConsumerRecord<String, byte[]> unreadable = new ConsumerRecord<>(TOPIC, 0, 4L, "thread-1",
                "{not a record".getBytes(StandardCharsets.UTF_8));

        format.down = true;
        assertThatThrownBy(() -> history.read(record)).isInstanceOf(SchemaRegistryException.class);

        format.down = false;
        assertThat(history.read(record).turnId()).isEqualTo("turn-1");
        assertThat(history.read(unreadable)).as("left out").isNull();
    }
}
