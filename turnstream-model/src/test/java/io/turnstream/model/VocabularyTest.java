package io.turnstream.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The vocabularies are enums in Java and exactly the contract's words on the wire. */
class VocabularyTest {

    static Stream<Class<? extends WireValue>> vocabularies() {
        return Stream.of(ItemType.class, UiItemType.class, ChangeType.class, PayloadType.class, UiPayloadType.class,
                ResponseStatus.class, TurnActivity.class, ToolState.class, ControlMessage.Type.class,
                TurnRequestRecord.Kind.class);
    }

    @ParameterizedTest
    @MethodSource("vocabularies")
    void everyWordIsWrittenAndReadAsTheContractSpellsIt(Class<? extends WireValue> vocabulary) throws IOException {
        for (WireValue word : vocabulary.getEnumConstants()) {
            String json = Json.toString(word);

            assertThat(json).isEqualTo("\"" + word.wire() + "\"").isEqualTo(json.toLowerCase());
            assertThat(Json.fromBytes(json.getBytes(StandardCharsets.UTF_8), vocabulary)).isSameAs(word);
            assertThat(word).hasToString(word.wire());
        }
    }

    @Test
    void theContractsWordsAreTheOnesTheArchitectureNames() {
        assertThat(words(UiItemType.class)).containsExactly("message", "reasoning", "tool_call", "tool_output", "error");
        assertThat(words(ItemType.class))
                .containsExactly("message", "reasoning", "function_call", "function_call_output", "error");
        assertThat(words(ChangeType.class)).containsExactly("created", "updated", "completed", "withdrawn");
        assertThat(words(ResponseStatus.class)).containsExactly("complete", "error", "aborted");
        assertThat(words(PayloadType.class)).containsExactly("item_upsert", "turn_event", "status");
        assertThat(words(UiPayloadType.class)).containsExactly("item_upsert", "turn_started", "turn_completed",
                "turn_error", "turn_status", "tool_status");
    }

    @Test
    void aTurnEventIsWrittenWithTheContractsStrings() {
        UpsertEnvelope envelope = new UpsertEnvelope("e-1", 1, "turn-1", 3, PayloadType.TURN_EVENT,
                new UITurnEvent(UiPayloadType.TURN_COMPLETED, "turn-1", "thread-1", null, null, ResponseStatus.COMPLETE,
                        null, null));

        String json = Json.toString(envelope);

        assertThat(json).isEqualTo("{\"eventId\":\"e-1\",\"timestamp\":1,\"turnId\":\"turn-1\",\"seq\":3,"
                + "\"payloadType\":\"turn_event\",\"payload\":{\"type\":\"turn_completed\",\"turnId\":\"turn-1\","
                + "\"threadId\":\"thread-1\",\"status\":\"complete\"}}");
        assertThat(Json.fromString(json, UpsertEnvelope.class)).isEqualTo(envelope);
    }

    @Test
    void aPayloadOfAnUnknownTypeIsRefusedNamingTheKnownOnes() {
        String json = "{\"payloadType\":\"turn_event\",\"payload\":{\"type\":\"turn_paused\",\"turnId\":\"t\"}}";

        assertThatThrownBy(() -> Json.fromBytes(json.getBytes(StandardCharsets.UTF_8), UpsertEnvelope.class))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("Could not resolve type id 'turn_paused'")
                .hasMessageContaining("known type ids = [item_upsert, tool_status, turn_completed, turn_error, "
                        + "turn_started, turn_status]");
    }

    @Test
    void aRecordCannotClaimAnotherRecordsType() {
        assertThatThrownBy(() -> new UITurnEvent(UiPayloadType.ITEM_UPSERT, "t", "th", null, null, null, null, null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("UITurnEvent type must be one of [turn_started, turn_completed, turn_error], not item_upsert");
    }

    @Test
    void aControlCommandOfANewerPeerReadsAsNoType() {
        ControlMessage message = Json.fromString("{\"type\":\"pause\",\"turnId\":\"turn-1\"}", ControlMessage.class);

        assertThat(message.type()).isNull();
        assertThat(message.turnId()).isEqualTo("turn-1");
    }

    @Test
    void aRawItemTypeStaysTheProducersTextAndIsKnownOnlyWhenTheContractNamesIt() {
        StreamPayload.ItemStart odd = Json.fromString(
                "{\"type\":\"item_start\",\"item_id\":\"i\",\"item_type\":\"hologram\"}", StreamPayload.ItemStart.class);

        assertThat(odd.itemType()).isEqualTo("hologram");
        assertThat(odd.knownItemType()).isNull();
        assertThat(new StreamPayload.ItemStart("i", ItemType.FUNCTION_CALL, null, null, null, null, null).knownItemType())
                .isEqualTo(ItemType.FUNCTION_CALL);
        assertThat(ItemType.FUNCTION_CALL.uiType()).isEqualTo(UiItemType.TOOL_CALL);
    }

    private static <E extends Enum<E> & WireValue> List<String> words(Class<E> vocabulary) {
        return Arrays.stream(vocabulary.getEnumConstants()).map(WireValue::wire).toList();
    }
}
