package io.turnstream.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.Json;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The streaming read of item_delta events gives what the full reader gives, or leaves the input to it. */
class JsonDeltaReaderTest {

    @ParameterizedTest
    @ValueSource(strings = {
        "{\"event_id\":\"e1\",\"timestamp\":1700000000000,\"run_id\":\"run-1\",\"type\":\"item_delta\",\"payload\":{\"type\":\"item_delta\",\"item_id\":\"msg\",\"delta_content\":\"Hello\"}}",
        "{\"payload\":{\"delta_content\":\"a \\\"quoted\\\" \\\\ \\n line\",\"item_id\":\"msg\",\"type\":\"item_delta\"},\"type\":\"item_delta\",\"run_id\":\"r\"}",
        "{\"event_id\":null,\"timestamp\":0,\"run_id\":\"r\",\"type\":\"item_delta\",\"payload\":{\"type\":\"item_delta\",\"item_id\":\"m\",\"delta_content\":\"go \\ud83d\"}}",
        "{\"run_id\":\"r\",\"payload\":{\"type\":\"item_delta\",\"item_id\":\"m\",\"delta_content\":\"你好 😀\"}}",
        "{\"run_id\":\"r\",\"payload\":{\"type\":\"item_delta\",\"item_id\":null,\"delta_content\":null}}",
        "{\"run_id\":\"r\",\"trace_context\":null,\"payload\":{\"type\":\"item_delta\",\"item_id\":\"m\",\"delta_content\":\"x\"}}",
        "{\"run_id\":\"r\",\"trace_context\":{\"traceparent\":\"00-ab-cd-01\"},\"payload\":{\"type\":\"item_delta\",\"item_id\":\"m\",\"delta_content\":\"x\"}}",
        "{\"run_id\":\"a\",\"run_id\":\"b\",\"payload\":{\"type\":\"item_delta\",\"item_id\":\"m\",\"delta_content\":\"x\"}}",
    })
    void plainDeltasAreReadAsTheFullReaderReadsThem(String json) throws IOException {
        StreamEvent fast = JsonDeltaReader.read(bytes(json));

        assertThat(fast).isNotNull().isEqualTo(Json.fromBytes(bytes(json), StreamEvent.class));
        assertThat(fast.payload()).isInstanceOf(StreamPayload.ItemDelta.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "{\"run_id\":\"r\",\"type\":\"item_start\",\"payload\":{\"type\":\"item_start\",\"item_id\":\"m\",\"item_type\":\"message\"}}",
        "{\"run_id\":\"r\",\"type\":\"item_delta\",\"payload\":{\"type\":\"item_delta\",\"item_id\":\"m\",\"delta_content\":\"x\",\"extra\":1}}",
        "{\"run_id\":\"r\",\"timestamp\":\"17\",\"payload\":{\"type\":\"item_delta\",\"item_id\":\"m\",\"delta_content\":\"x\"}}",
        "{\"run_id\":\"r\",\"timestamp\":1.5,\"payload\":{\"type\":\"item_delta\",\"item_id\":\"m\",\"delta_content\":\"x\"}}",
        "{\"run_id\":7,\"payload\":{\"type\":\"item_delta\",\"item_id\":\"m\",\"delta_content\":\"x\"}}",
        "{\"run_id\":\"r\",\"payload\":{\"item_id\":\"m\",\"delta_content\":\"x\"}}",
        "{\"run_id\":\"r\",\"payload\":null}",
        "{\"run_id\":\"r\",\"unknown\":true,\"payload\":{\"type\":\"item_delta\",\"item_id\":\"m\",\"delta_content\":\"x\"}}",
        "{\"run_id\":\"r\",\"payload\":{\"type\":\"item_delta\",\"item_id\":\"m\",\"delta_content\":\"x\"}} trailing",
        "{\"run_id\":\"r\",\"payload\":{\"type\":\"item_delta\",\"item_id\":\"m\",\"delta_content\":\"x\"",
        "not json at all",
        "[]",
    })
    void anythingElseIsLeftToTheFullReader(String json) {
        assertThat(JsonDeltaReader.read(bytes(json))).isNull();
    }

    private static byte[] bytes(String json) {
        return json.getBytes(StandardCharsets.UTF_8);
    }
}
