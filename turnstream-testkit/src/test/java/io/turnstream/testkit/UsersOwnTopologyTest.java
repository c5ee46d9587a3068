package io.turnstream.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.ChangeType;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiItemType;
import io.turnstream.model.UpsertEnvelope;
import io.turnstream.schema.ContractSerde;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.state.KeyValueStore;
import org.junit.jupiter.api.Test;

/**
 * What a team does with the kit: its own Kafka Streams app reads {@code llm.upserts} (here, it
 * counts each tool's completed calls) and is tested against the upserts Turnstream really emits.
 */
class UsersOwnTopologyTest {

    /** The user's application: completed tool calls per tool, in a queryable store. */
    static Topology toolUsage() {
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream("llm.upserts", Consumed.with(Serdes.String(), ContractSerde.json(UpsertEnvelope.class)))
                .filter((turnId, envelope) -> envelope.payload() instanceof UIUpsert upsert
                        && upsert.itemType() == UiItemType.TOOL_CALL && upsert.changeType() == ChangeType.COMPLETED)
                .map((turnId, envelope) -> KeyValue.pair(((UIUpsert) envelope.payload()).toolName(), envelope))
                .groupByKey(Grouped.with(Serdes.String(), ContractSerde.json(UpsertEnvelope.class)))
                .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("tool-usage"));
        return builder.build();
    }

    @Test
    void theUsersAppCountsTheToolCallsTurnstreamEmits() {
        try (TurnstreamTestDriver turnstream = TurnstreamTestDriver.create();
             TopologyTestDriver usersApp = new TopologyTestDriver(toolUsage(), usersAppProperties())) {
            turnstream.send(TurnEvents.turn("turn-1")
                    .toolCall("i1", "read_file", "{\"path\":\"a\"}", "c1")
                    .toolCall("i2", "read_file", "{\"path\":\"b\"}", "c2")
                    .toolCall("i3", "grep", "{\"pattern\":\"x\"}", "c3")
                    .message("msg-1", "Done.")
                    .completed());

            TestInputTopic<String, UpsertEnvelope> upserts = usersApp.createInputTopic("llm.upserts",
                    Serdes.String().serializer(), ContractSerde.json(UpsertEnvelope.class));
            turnstream.upserts().forEach(envelope -> upserts.pipeInput(envelope.turnId(), envelope));

            KeyValueStore<String, Long> usage = usersApp.getKeyValueStore("tool-usage");
            assertThat(Map.of("read_file", usage.get("read_file"), "grep", usage.get("grep")))
                    .isEqualTo(Map.of("read_file", 2L, "grep", 1L));
        }
    }

    private static Properties usersAppProperties() {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "tool-usage");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        return props;
    }
}
