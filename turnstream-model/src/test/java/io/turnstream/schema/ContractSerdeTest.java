package io.turnstream.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.turnstream.model.Json;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.UpsertEnvelope;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.api.Test;

class ContractSerdeTest {

    private static final String TOPIC = "llm.upserts";

    @Test
    void jsonIsTheContractsJsonAndReadsBackEveryRecordType() {
        UpsertEnvelope envelope = ContractSamples.upsertEnvelopes().get(1);
        ContractSerde<UpsertEnvelope> serde = ContractSerde.json(UpsertEnvelope.class);

        byte[] bytes = serde.serializer().serialize(TOPIC, envelope);

        assertThat(new String(bytes, StandardCharsets.UTF_8)).isEqualTo(new String(Json.toBytes(envelope), StandardCharsets.UTF_8));
        for (Object record : ContractSamples.all()) {
            assertThat(roundTrip(ContractSerde.json(record.getClass()), record)).isEqualTo(record);
        }
    }

    @Test
    void avroFromTheServicesSettingsRoundTripsEveryRecordTypeThroughTheRegistry() throws IOException {
        try (FakeSchemaRegistry registry = FakeSchemaRegistry.start()) {
            Map<String, Object> configs = Map.of(WireFormats.FORMAT_CONFIG, "avro", SchemaRegistryClient.URL_CONFIG, registry.url());

            for (Object record : ContractSamples.all()) {
                assertThat(roundTrip(ContractSerde.from(record.getClass(), configs), record)).isEqualTo(record);
            }
            assertThat(ContractSerde.from(UpsertEnvelope.class, configs).serialize(TOPIC, ContractSamples.upsertEnvelopes().get(0)))
                    .startsWith(AvroWireFormat.MAGIC_BYTE);
        }
    }

    @Test
    void tombstonesStayNullAndBadBytesAreASerializationExceptionWithTheReason() {
        ContractSerde<StreamEvent> serde = ContractSerde.json(StreamEvent.class);

        assertThat(serde.serialize("llm.raw-events", null)).isNull();
        assertThat(serde.deserialize("llm.raw-events", null)).isNull();
        assertThatThrownBy(() -> serde.deserialize("llm.raw-events", "not json".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(SerializationException.class)
                .hasMessageStartingWith("not a StreamEvent on llm.raw-events: ");
    }

    @Test
    void anUnknownFormatIsRefusedWhenTheSerdeIsMade() {
        assertThatThrownBy(() -> ContractSerde.from(UpsertEnvelope.class, Map.of(WireFormats.FORMAT_CONFIG, "protobuf")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must be json or avro");
    }

    @SuppressWarnings("unchecked")
    private static <T> Object roundTrip(ContractSerde<T> serde, Object record) {
        return serde.deserializer().deserialize("topic-of-" + record.getClass().getSimpleName(),
                serde.serializer().serialize("topic-of-" + record.getClass().getSimpleName(), (T) record));
    }
}
