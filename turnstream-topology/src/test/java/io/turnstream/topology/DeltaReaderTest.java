package io.turnstream.topology;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.Json;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.TraceContext;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The delta fast path reads exactly what the full read ({@link Json#fromBytes}) reads: for the deltas it
 * takes, an equal event; everything else it declines, so the full read's event or failure (the dead
 * letter's reason) stands.
 */
class DeltaReaderTest {

    private static final String TOPIC = "llm.raw-events";
    private static final String PLAIN_PAYLOAD = "{\"type\":\"item_delta\",\"item_id\":\"msg\",\"delta_content\":\"the quick\"}";

    @Test
    void aDeltaAsTheGatewayWritesItTraceContextIncludedIsReadWithoutTheFullRead() throws IOException {
        TraceContext trace = new TraceContext("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "vendor=1");
        StreamEvent written = new StreamEvent("0b0f4c7e-1", 1_700_000_000_000L, trace.toJson(), "run-1",
                StreamPayload.ITEM_DELTA, new StreamPayload.ItemDelta("run-1-msg", "the quick br"));

        assertTakenAndEqual(WireFormat.JSON.write(TOPIC, written));
        assertThat(DeltaReader.read(WireFormat.JSON.write(TOPIC, written))).isEqualTo(written);
    }

    @Test
    void aDeltaAsTheBenchWritesItWithoutTraceContextIsReadWithoutTheFullRead() throws IOException {
        StreamEvent written = StreamEvent.of("run-1:42", 1_700_000_000_000L, "run-1",
                new StreamPayload.ItemDelta("run-1-msg", "the quick br"));

        assertThat(DeltaReader.read(WireFormat.JSON.write(TOPIC, written))).isEqualTo(written);
    }

    @ParameterizedTest
    @ValueSource(strings = {
        // fields in another order, the payload's type last
        "{\"payload\":{\"delta_content\":\"x\",\"item_id\":\"msg\",\"type\":\"item_delta\"},\"type\":\"item_delta\","
                + "\"run_id\":\"r\",\"timestamp\":5,\"event_id\":\"e\"}",
        // unknown fields of every kind, at both levels, skipped as the full read ignores them
        "{\"event_id\":\"e\",\"extra\":{\"a\":[1,{\"b\":null}]},\"timestamp\":5,\"run_id\":\"r\",\"type\":\"item_delta\","
                + "\"more\":[true,false],\"payload\":{\"type\":\"item_delta\",\"index\":3,\"nested\":{\"item_id\":\"no\"},"
                + "\"item_id\":\"msg\",\"delta_content\":\"x\"},\"last\":1.5e3}",
        // the records' own names in camel case are not the contract's: unknown to both reads
        "{\"eventId\":\"e\",\"runId\":\"r\",\"run_id\":\"r\",\"payload\":{\"type\":\"item_delta\",\"itemId\":\"no\","
                + "\"deltaContent\":\"no\",\"item_id\":\"msg\",\"delta_content\":\"x\"}}",
        // escapes, a surrogate pair escaped, raw UTF-8 of two, three and four bytes
        "{\"run_id\":\"r\",\"type\":\"item_delta\",\"payload\":{\"type\":\"item_delta\",\"item_id\":\"m\\u0073g\","
                + "\"delta_content\":\"line\\nbreak \\\"quoted\\\" back\\\\slash \\/ \\t\\u00e9\\ud83d\\ude00 é € 😀\"}}",
        // half of a surrogate pair escaped alone: a producer may split a pair across deltas
        "{\"run_id\":\"r\",\"type\":\"item_delta\",\"payload\":{\"type\":\"item_delta\",\"item_id\":\"m\","
                + "\"delta_content\":\"\\ud83d\"}}",
        // empty and null content, null and empty item id: the turn machine decides what they mean
        "{\"run_id\":\"r\",\"type\":\"item_delta\",\"payload\":{\"type\":\"item_delta\",\"item_id\":\"m\",\"delta_content\":\"\"}}",
        "{\"run_id\":\"r\",\"type\":\"item_delta\",\"payload\":{\"type\":\"item_delta\",\"item_id\":\"m\",\"delta_content\":null}}",
        "{\"run_id\":\"r\",\"type\":\"item_delta\",\"payload\":{\"type\":\"item_delta\",\"item_id\":null,\"delta_content\":\"x\"}}",
        "{\"run_id\":\"r\",\"type\":\"item_delta\",\"payload\":{\"type\":\"item_delta\",\"item_id\":\"\"}}",
        // missing fields: absent in both reads (a timestamp of 0)
        "{\"payload\":{\"type\":\"item_delta\"}}",
        "{\"run_id\":null,\"type\":null,\"event_id\":null,\"payload\":" + PLAIN_PAYLOAD + "}",
        // an empty trace context, a negative and a large timestamp, white space everywhere
        "{ \"trace_context\" : { } , \"timestamp\" : -1 , \"payload\" : " + PLAIN_PAYLOAD + " }\n",
        "{\"trace_context\":{\"traceparent\":\"00-a-b-01\"},\"timestamp\":9223372036854775807,\"payload\":" + PLAIN_PAYLOAD + "}",
    })
    void plainDeltasAreTakenAndReadAsTheFullReadReadsThem(String json) throws IOException {
        assertTakenAndEqual(json.getBytes(UTF_8));
    }

    @ParameterizedTest
    @ValueSource(strings = {
        // every other event type
        "{\"run_id\":\"r\",\"type\":\"item_start\",\"payload\":{\"type\":\"item_start\",\"item_id\":\"m\",\"item_type\":\"message\"}}",
        "{\"run_id\":\"r\",\"payload\":{\"type\":\"item_done\",\"item_id\":\"m\"}}",
        "{\"run_id\":\"r\",\"payload\":{\"item_id\":\"m\",\"type\":\"response_done\"}}",
        // a delta's top-level type on another payload, and the reverse
        "{\"run_id\":\"r\",\"type\":\"item_delta\",\"payload\":{\"type\":\"item_done\",\"item_id\":\"m\"}}",
        "{\"run_id\":\"r\",\"type\":\"item_done\",\"payload\":" + PLAIN_PAYLOAD + "}",
        // no payload, a payload without type, of an unknown type, or not an object
        "{\"run_id\":\"r\",\"type\":\"item_delta\"}",
        "{\"run_id\":\"r\",\"type\":\"item_delta\",\"payload\":{\"item_id\":\"m\",\"delta_content\":\"x\"}}",
        "{\"run_id\":\"r\",\"type\":\"item_delta\",\"payload\":{\"type\":\"no_such_event\"}}",
        "{\"run_id\":\"r\",\"type\":\"item_delta\",\"payload\":null}",
        "{\"run_id\":\"r\",\"type\":\"item_delta\",\"payload\":[]}",
        "{\"run_id\":\"r\",\"type\":\"item_delta\",\"payload\":{\"type\":null}}",
        "{\"run_id\":\"r\",\"type\":\"item_delta\",\"payload\":{\"type\":7}}",
        "{\"run_id\":\"r\",\"type\":\"item_delta\",\"payload\":{\"type\":\"ITEM_DELTA\"}}",
        // repeated fields, at both levels and in the trace context
        "{\"run_id\":\"r\",\"run_id\":\"s\",\"payload\":" + PLAIN_PAYLOAD + "}",
        "{\"payload\":" + PLAIN_PAYLOAD + ",\"payload\":" + PLAIN_PAYLOAD + "}",
        "{\"payload\":{\"type\":\"item_delta\",\"item_id\":\"a\",\"item_id\":\"b\"}}",
        "{\"payload\":{\"type\":\"item_delta\",\"type\":\"item_delta\"}}",
        "{\"trace_context\":{\"traceparent\":\"a\",\"traceparent\":\"b\"},\"payload\":" + PLAIN_PAYLOAD + "}",
        // values of another kind than the records' fields
        "{\"run_id\":7,\"payload\":" + PLAIN_PAYLOAD + "}",
        "{\"run_id\":true,\"payload\":" + PLAIN_PAYLOAD + "}",
        "{\"run_id\":{\"a\":1},\"payload\":" + PLAIN_PAYLOAD + "}",
        "{\"type\":[\"item_delta\"],\"payload\":" + PLAIN_PAYLOAD + "}",
        "{\"payload\":{\"type\":\"item_delta\",\"item_id\":12,\"delta_content\":\"x\"}}",
        "{\"payload\":{\"type\":\"item_delta\",\"item_id\":\"m\",\"delta_content\":[\"x\"]}}",
        "{\"timestamp\":\"5\",\"payload\":" + PLAIN_PAYLOAD + "}",
        "{\"timestamp\":5.5,\"payload\":" + PLAIN_PAYLOAD + "}",
        "{\"timestamp\":null,\"payload\":" + PLAIN_PAYLOAD + "}",
        "{\"timestamp\":92233720368547758070,\"payload\":" + PLAIN_PAYLOAD + "}",
        "{\"trace_context\":null,\"payload\":" + PLAIN_PAYLOAD + "}",
        "{\"trace_context\":\"00-a-b-01\",\"payload\":" + PLAIN_PAYLOAD + "}",
        "{\"trace_context\":{\"traceparent\":1},\"payload\":" + PLAIN_PAYLOAD + "}",
        "{\"trace_context\":{\"nested\":{\"a\":\"b\"}},\"payload\":" + PLAIN_PAYLOAD + "}",
        // malformed JSON, cut short, trailing content, not an object
        "{not json",
        "{\"run_id\":\"r\",\"payload\":{\"type\":\"item_delta\",\"item_id\":\"m\",\"delta_content\":\"x",
        "{\"run_id\":\"r\",\"payload\":{\"type\":\"item_delta\",\"item_id\":\"m\"}",
        "{\"payload\":" + PLAIN_PAYLOAD + "}}",
        "{\"payload\":" + PLAIN_PAYLOAD + "} {}",
        "{\"payload\":" + PLAIN_PAYLOAD + "} trailing",
        "{\"payload\":{\"type\":\"item_delta\",\"delta_content\":\"bad \\q escape\"}}",
        "{\"payload\":{\"type\":\"item_delta\",\"delta_content\":\"raw\u0001control\"}}",
        "[" + PLAIN_PAYLOAD + "]",
        "\"item_delta\"",
        "null",
        "",
        "   ",
    })
    void everythingElseIsDeclinedAndTheFullReadsOutcomeStands(String json) {
        byte[] bytes = json.getBytes(UTF_8);

        assertThat(DeltaReader.read(bytes)).isNull();
        assertThat(outcome(bytes)).isEqualTo(fullRead(bytes));
    }

    @Test
    void nullBytesAreDeclined() {
        assertThat(DeltaReader.read(null)).isNull();
    }

    @Test
    void bytesInUtf16AreDetectedAsTheFullReadDetectsThem() {
        byte[] bytes = ("{\"run_id\":\"r\",\"payload\":" + PLAIN_PAYLOAD + "}").getBytes(StandardCharsets.UTF_16BE);

        assertThat(outcome(bytes)).isEqualTo(fullRead(bytes));
    }

    /**
     * Seeded: many events of random shape (field order, which fields, unknown fields, odd values, repeats,
     * escaped and raw unicode, other event types, cut short) read the same through the fast path as in full.
     */
    @Test
    void generatedEventsReadTheSameThroughTheFastPathAsInFull() {
        long seed = 20261127L;
        Random random = new Random(seed);
        int taken = 0;
        int events = 20_000;
        for (int i = 0; i < events; i++) {
            byte[] bytes = RandomEvent.generate(random).getBytes(UTF_8);
            if (DeltaReader.read(bytes) != null) {
                taken++;
            }
            assertThat(outcome(bytes))
                    .as("event %d of seed %d: %s", i, seed, new String(bytes, UTF_8))
                    .isEqualTo(fullRead(bytes));
        }
        // the generator makes plain deltas often enough that the comparison covers the fast path itself
        assertThat(taken).isGreaterThan(events / 5);
    }

    private static void assertTakenAndEqual(byte[] bytes) throws IOException {
        StreamEvent fast = DeltaReader.read(bytes);
        assertThat(fast).as("taken by the fast path").isNotNull();
        assertThat(fast).isEqualTo(Json.fromBytes(bytes, StreamEvent.class));
    }

    /** What the processor gets: the fast path's event, or the full read's event or failure. */
    private static Object outcome(byte[] bytes) {
        StreamEvent fast = DeltaReader.read(bytes);
        return fast != null ? fast : fullRead(bytes);
    }

    /** The full read's event, or its failure's class and message (what a dead letter's reason is made of). */
    private static Object fullRead(byte[] bytes) {
        try {
            return Json.fromBytes(bytes, StreamEvent.class);
        } catch (IOException | RuntimeException e) {
            return e.getClass().getName() + ": " + e.getMessage();
        }
    }

    /** Raw events of random shape, mostly deltas, some odd. */
    private static final class RandomEvent {

        private static final String[] TEXTS = {
            "", "x", "the quick br", "line\\nbreak", "\\\"quoted\\\"", "back\\\\slash", "\\u00e9t\\u00e9",
            "\\ud83d\\ude00", "\\ud83d", "é€😀", "日本語", " spaced  ", "\\t\\r\\b\\f\\/", "0123456789abcdef",
        };
        private static final String[] TYPES = {
            "item_delta", "item_delta", "item_delta", "item_delta", "item_start", "item_done", "response_done",
            "no_such_event", "Item_Delta",
        };
        private static final String[] ODD_VALUES = {
            "null", "7", "-3", "1.5", "true", "[]", "[\"item_delta\"]", "{}", "{\"a\":\"b\"}", "\"\"",
            "92233720368547758070",
        };

        static String generate(Random random) {
            String type = pick(random, TYPES);
            List<String> payload = new ArrayList<>();
            maybe(random, 0.95, () -> payload.add(field("type", random.nextInt(30) == 0 ? odd(random) : quoted(type))));
            maybe(random, 0.95, () -> payload.add(field("item_id", value(random, "msg-" + random.nextInt(3)))));
            maybe(random, 0.9, () -> payload.add(field("delta_content", value(random, text(random)))));
            maybe(random, 0.1, () -> payload.add(field("index", odd(random))));
            maybe(random, 0.05, () -> payload.add(field("itemId", value(random, "other"))));
            maybe(random, 0.03, () -> payload.add(payload.isEmpty() ? field("type", quoted(type)) : payload.get(0)));
            Collections.shuffle(payload, random);

            List<String> event = new ArrayList<>();
            maybe(random, 0.9, () -> event.add(field("event_id", value(random, "run-1:" + random.nextInt(1000)))));
            maybe(random, 0.9, () -> event.add(field("timestamp",
                    random.nextInt(20) == 0 ? odd(random) : Long.toString(random.nextLong()))));
            maybe(random, 0.5, () -> event.add(field("trace_context", traceContext(random))));
            maybe(random, 0.9, () -> event.add(field("run_id", value(random, "run-1"))));
            maybe(random, 0.9, () -> event.add(field("type", random.nextInt(10) == 0 ? quoted(pick(random, TYPES))
                    : value(random, type))));
            maybe(random, 0.97, () -> event.add(field("payload", random.nextInt(40) == 0 ? odd(random)
                    : "{" + String.join(",", payload) + "}")));
            maybe(random, 0.1, () -> event.add(field("extra", "{\"nested\":[1,{\"run_id\":\"x\"}]}")));
            maybe(random, 0.03, () -> event.add(event.isEmpty() ? field("run_id", "\"r\"") : event.get(0)));
            Collections.shuffle(event, random);

            String json = "{" + String.join(random.nextBoolean() ? "," : " , ", event) + "}";
            if (random.nextInt(40) == 0) {
                return json.substring(0, random.nextInt(json.length() + 1));
            }
            return random.nextInt(60) == 0 ? json + pick(random, new String[] {"}", " {}", "x", "\n"}) : json;
        }

        private static String traceContext(Random random) {
            return switch (random.nextInt(8)) {
                case 0 -> odd(random);
                case 1 -> "{\"traceparent\":\"00-a-b-01\",\"traceparent\":\"00-c-d-01\"}";
                case 2 -> "{\"traceparent\":" + odd(random) + "}";
                default -> "{\"traceparent\":\"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\""
                        + (random.nextBoolean() ? ",\"tracestate\":\"vendor=1\"" : "") + "}";
            };
        }

        /** Mostly the string, sometimes null or a value of another kind. */
        private static String value(Random random, String text) {
            int roll = random.nextInt(30);
            return roll == 0 ? "null" : roll == 1 ? odd(random) : quoted(text);
        }

        private static String text(Random random) {
            StringBuilder text = new StringBuilder();
            for (int i = random.nextInt(4); i > 0; i--) {
                text.append(pick(random, TEXTS));
            }
            return text.toString();
        }

        private static String odd(Random random) {
            return pick(random, ODD_VALUES);
        }

        private static String field(String name, String value) {
            return quoted(name) + ":" + value;
        }

        private static String quoted(String text) {
            return "\"" + text + "\"";
        }

        private static void maybe(Random random, double probability, Runnable action) {
            if (random.nextDouble() < probability) {
                action.run();
            }
        }

        private static String pick(Random random, String[] values) {
            return values[random.nextInt(values.length)];
        }
    }
}
