package io.turnstream.topology;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.Json;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.runtime.TraceContext;
import java.io.IOException;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The parser-free read takes the deltas the project's writer writes in ASCII and reads them as the full read
 * does; everything else it declines, leaving it to {@link DeltaReader}'s parser ({@link DeltaReaderTest} checks
 * that path, and the scanner in front of it, against the full read).
 */
class CompactDeltaScannerTest {

    private static final String PAYLOAD = "{\"type\":\"item_delta\",\"item_id\":\"msg\",\"delta_content\":\"x\"}";

    @Test
    void aDeltaAsTheGatewayWritesItIsTakenAndReadAsTheFullReadReadsIt() throws IOException {
        TraceContext trace = new TraceContext("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "vendor=1");
        StreamEvent written = new StreamEvent("0b0f4c7e-1", 1_700_000_000_000L, trace.toJson(), "run-1",
                StreamPayload.ITEM_DELTA, new StreamPayload.ItemDelta("run-1-msg", "line\nbreak \"quoted\" \\ \t\u0001"));

        assertTakenAndEqual(Json.toBytes(written));
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "{\"payload\":{\"type\":\"item_delta\"}}",
        "{\"event_id\":null,\"timestamp\":-0,\"trace_context\":{},\"run_id\":null,\"payload\":" + PAYLOAD + "}",
        "{\"timestamp\":-123456789012345678,\"payload\":{\"type\":\"item_delta\",\"item_id\":null,\"delta_content\":null}}",
        "{\"run_id\":\"r\",\"payload\":{\"type\":\"item_delta\",\"delta_content\":\"\\u00e9\\ud83d\\ude00\\ud83d\\/\\b\\f\\r\\u0041\"}}",
        "{\"trace_context\":{\"a\":\"\",\"b\":\"c\\\"\"},\"type\":\"item_delta\",\"payload\":" + PAYLOAD + "}",
    })
    void plainDeltasInTheWritersOrderAreTaken(String json) throws IOException {
        assertTakenAndEqual(json.getBytes(UTF_8));
    }

    @ParameterizedTest
    @ValueSource(strings = {
        // bytes beyond ASCII, white space, another order, an unknown or repeated field, trailing content
        "{\"payload\":{\"type\":\"item_delta\",\"delta_content\":\"é\"}}",
        "{ \"payload\":" + PAYLOAD + "}",
        "{\"payload\":" + PAYLOAD + "}\n",
        "{\"run_id\":\"r\",\"event_id\":\"e\",\"payload\":" + PAYLOAD + "}",
        "{\"payload\":{\"item_id\":\"m\",\"type\":\"item_delta\"}}",
        "{\"extra\":1,\"payload\":" + PAYLOAD + "}",
        "{\"run_id\":\"r\",\"run_id\":\"s\",\"payload\":" + PAYLOAD + "}",
        "{\"trace_context\":{\"a\":\"b\",\"a\":\"c\"},\"payload\":" + PAYLOAD + "}",
        "{\"payload\":" + PAYLOAD + ",\"extra\":1}",
        "{\"payload\":" + PAYLOAD + "}}",
        // values the full read reads otherwise, or not at all
        "{\"timestamp\":0123,\"payload\":" + PAYLOAD + "}",
        "{\"timestamp\":1234567890123456789,\"payload\":" + PAYLOAD + "}",
        "{\"timestamp\":1.5,\"payload\":" + PAYLOAD + "}",
        "{\"timestamp\":-,\"payload\":" + PAYLOAD + "}",
        "{\"timestamp\":null,\"payload\":" + PAYLOAD + "}",
        "{\"type\":null,\"payload\":" + PAYLOAD + "}",
        "{\"type\":\"item_done\",\"payload\":" + PAYLOAD + "}",
        "{\"trace_context\":null,\"payload\":" + PAYLOAD + "}",
        "{\"trace_context\":{\"a\":1},\"payload\":" + PAYLOAD + "}",
        "{\"run_id\":7,\"payload\":" + PAYLOAD + "}",
        "{\"payload\":{\"type\":\"item_done\",\"item_id\":\"m\"}}",
        "{\"payload\":{\"type\":\"item_delta\",\"delta_content\":\"bad \\q escape\"}}",
        "{\"payload\":{\"type\":\"item_delta\",\"delta_content\":\"short \\u00e\"}}",
        "{\"payload\":{\"type\":\"item_delta\",\"delta_content\":\"raw\u0001control\"}}",
        "{\"payload\":{\"type\":\"item_delta\",\"delta_content\":\"cut short",
        "{\"payload\":{\"type\":\"item_delta\",\"delta_content\":\"cut \\",
        "{\"payload\":null}",
        "{}",
        "",
    })
    void everythingElseIsDeclined(String json) {
        assertThat(CompactDeltaScanner.read(json.getBytes(UTF_8))).isNull();
    }

    /**
     * Seeded: deltas as the writer writes them, with random text (escapes, control characters, surrogates, bytes
     * beyond ASCII), ids and optional fields; each is either declined or read equal to the full read, and every one
     * in ASCII is taken.
     */
    @Test
    void writtenDeltasAreReadAsTheFullReadReadsThemOrDeclined() throws IOException {
        long seed = 20261128L;
        Random random = new Random(seed);
        int ascii = 0;
        for (int i = 0; i < 20_000; i++) {
            StreamEvent written = new StreamEvent(maybe(random, text(random)), (random.nextLong() % 1_000_000_000_000_000_000L) >> random.nextInt(64),
                    random.nextInt(3) == 0 ? traceContext(random) : null, maybe(random, "run-" + random.nextInt(100)),
                    random.nextBoolean() ? StreamPayload.ITEM_DELTA : null,
                    new StreamPayload.ItemDelta(maybe(random, text(random)), maybe(random, text(random))));
            byte[] bytes = Json.toBytes(written);
            StreamEvent scanned = CompactDeltaScanner.read(bytes);
            boolean isAscii = new String(bytes, UTF_8).chars().allMatch(c -> c < 0x80);
            if (isAscii) {
                ascii++;
                assertThat(scanned).as("event %d of seed %d: %s", i, seed, new String(bytes, UTF_8)).isNotNull();
            }
            if (scanned != null) {
                assertThat(scanned).as("event %d of seed %d", i, seed).isEqualTo(Json.fromBytes(bytes, StreamEvent.class));
            }
        }
        assertThat(ascii).isGreaterThan(5_000);
    }

    private static void assertTakenAndEqual(byte[] bytes) throws IOException {
        StreamEvent scanned = CompactDeltaScanner.read(bytes);
        assertThat(scanned).as("taken by the scanner").isNotNull();
        assertThat(scanned).isEqualTo(Json.fromBytes(bytes, StreamEvent.class));
        assertThat(scanned).isEqualTo(DeltaReader.read(bytes));
    }

    private static com.fasterxml.jackson.databind.JsonNode traceContext(Random random) {
        return new TraceContext("00-" + text(random) + "-01", random.nextBoolean() ? "vendor=" + random.nextInt(9) : null)
                .toJson();
    }

    private static String maybe(Random random, String text) {
        return random.nextInt(10) == 0 ? null : text;
    }

    /** Mostly ASCII letters, sometimes what JSON escapes, and now and then a character beyond ASCII. */
    private static String text(Random random) {
        String[] pieces = {"the quick br", "x", "", "\"", "\\", "/", "\n", "\t", "\u0000", "\u001f", "\u007f", "é",
            "😀", "日本"};
        StringBuilder text = new StringBuilder();
        for (int i = random.nextInt(5); i > 0; i--) {
            int roll = random.nextInt(20);
            text.append(roll < 14 ? pieces[random.nextInt(3)] : pieces[random.nextInt(pieces.length)]);
        }
        return text.toString();
    }
}
