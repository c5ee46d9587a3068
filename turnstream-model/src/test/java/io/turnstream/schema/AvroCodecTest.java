package io.turnstream.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.turnstream.model.ControlMessage;
import io.turnstream.model.ItemAppend;
import io.turnstream.model.Json;
import io.turnstream.model.PayloadType;
import io.turnstream.model.PublishedTool;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.ToolCall;
import io.turnstream.model.ToolResult;
import io.turnstream.model.TurnRequestRecord;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UiPayloadType;
import io.turnstream.model.UpsertEnvelope;
import java.io.IOException;
import java.util.Arrays;
import java.util.stream.Stream;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class AvroCodecTest {

    static Stream<Object> samples() {
        return ContractSamples.all().stream();
    }

    @ParameterizedTest
    @MethodSource("samples")
    void everyRecordSurvivesAvroBinaryUnchanged(Object record) throws IOException {
        assertThat(roundTrip(record)).isEqualTo(record);
    }

    @Test
    void everyTopicValueTypeHasASchemaAndSamples() {
        assertThat(AvroSchemas.FILES.keySet()).containsExactly(StreamEvent.class, UpsertEnvelope.class,
                ToolCall.class, ToolResult.class, ControlMessage.class, ItemAppend.class, PublishedTool.class,
                TurnRequestRecord.class);
        assertThat(ContractSamples.all()).extracting(Object::getClass).map(Class.class::cast)
                .containsAll(AvroSchemas.FILES.keySet());
    }

    @Test
    void jsonValuedFieldsTravelAsJsonText() {
        ToolCall call = ContractSamples.toolCalls().get(0);
        GenericRecord avro = AvroCodec.toAvro(call, AvroSchemas.of(ToolCall.class));

        assertThat(avro.get("arguments")).hasToString("{\"city\":\"Paris\",\"nested\":{\"a\":[1,2,3]}}");
        assertThat(AvroCodec.toAvro(ContractSamples.toolCalls().get(1), AvroSchemas.of(ToolCall.class)).get("arguments"))
                .as("unparsed arguments stay a JSON string literal").hasToString("\"raw text\"");
    }

    @Test
    void payloadUnionBranchFollowsThePayloadType() {
        UpsertEnvelope turnCompleted = ContractSamples.envelope(8, ContractSamples.turnCompleted("turn-1"));

        GenericRecord avro = AvroCodec.toAvro(turnCompleted, AvroSchemas.of(UpsertEnvelope.class));

        assertThat(((GenericRecord) avro.get("payload")).getSchema().getName()).isEqualTo("UITurnEvent");
    }

    @Test
    void aMissingRequiredFieldIsNamed() {
        ControlMessage noTurn = new ControlMessage(ControlMessage.Type.CANCEL, null, "why");

        assertThatThrownBy(() -> AvroCodec.encode(noTurn, AvroSchemas.of(ControlMessage.class)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("ControlMessage.turnId is required");
    }

    @Test
    void aFieldTheSchemaLacksIsRefusedRatherThanDropped() {
        Schema withoutReason = new Schema.Parser().parse("""
                {"type":"record","name":"ControlMessage","namespace":"io.turnstream.avro","fields":[
                  {"name":"type","type":"string"},{"name":"turnId","type":"string"}]}""");

        assertThatThrownBy(() -> AvroCodec.encode(ControlMessage.cancel("turn-1", "stop"), withoutReason))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ControlMessage.reason is not in the Avro schema");
    }

    @Test
    void aPayloadTypeNoBranchListsIsRefused() {
        // a newer producer's payload type, which no record of this version can hold: written as JSON
        ObjectNode unknown = Json.MAPPER.valueToTree(new UpsertEnvelope("e", 1, "turn-1", 1, PayloadType.TURN_EVENT,
                new UITurnEvent(UiPayloadType.TURN_STARTED, "turn-1", "thread-1", null, null, null, null, null)));
        ((ObjectNode) unknown.get("payload")).put("type", "turn_paused");

        assertThatThrownBy(() -> AvroCodec.encode(unknown, AvroSchemas.of(UpsertEnvelope.class)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("UpsertEnvelope.payload.type 'turn_paused' selects none of [UIUpsert, UITurnEvent, UIStatus]");
    }

    @Test
    void bytesThatAreNotAvroAreAnIoErrorWithTheSchemaName() {
        Schema schema = AvroSchemas.of(ToolCall.class);
        byte[] truncated = Arrays.copyOf(AvroCodec.encode(ContractSamples.toolCalls().get(0), schema), 10);

        assertThatThrownBy(() -> AvroCodec.decode(truncated, 0, truncated.length, schema, schema, ToolCall.class))
                .isInstanceOf(IOException.class)
                .hasMessageStartingWith("not Avro binary of io.turnstream.avro.ToolCall");
    }

    private static Object roundTrip(Object record) throws IOException {
        Schema schema = AvroSchemas.of(record.getClass());
        byte[] bytes = AvroCodec.encode(record, schema);
        return AvroCodec.decode(bytes, 0, bytes.length, schema, schema, record.getClass());
    }
}
