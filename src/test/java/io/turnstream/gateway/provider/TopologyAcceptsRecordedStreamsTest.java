package io.turnstream.gateway.provider;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.ItemTypes;
import io.turnstream.model.Json;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UpsertEnvelope;
import io.turnstream.topology.TopologyConfig;
import io.turnstream.topology.UpsertTopology;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The contract between the gateway and its consumer: every recorded provider stream, normalised by
 * the real adapter and framed as a turn, goes through the real upsert topology without a dead
 * letter, and every item's last upsert carries its final content.
 */
class TopologyAcceptsRecordedStreamsTest {

    private static final String RUN = RecordedStreams.RUN;

    private static RecordedStreams streams;

    @BeforeAll
    static void startServer() {
        streams = new RecordedStreams();
    }

    @AfterAll
    static void stopServer() {
        streams.close();
    }

    @ParameterizedTest
    @MethodSource("io.turnstream.gateway.provider.RecordedStreams#all")
    void everyNormalisedStreamBecomesUpsertsWithoutDeadLetters(String fixture) throws IOException {
        RecordedStreams.Played played = streams.play(fixture);
        TopologyConfig config = TopologyConfig.defaults();
        try (TopologyTestDriver driver = new TopologyTestDriver(UpsertTopology.build(config), properties(config),
                Instant.ofEpochMilli(1_000_000))) {
            TestInputTopic<String, byte[]> raw = driver.createInputTopic(config.topics().rawEvents(),
                    new StringSerializer(), new ByteArraySerializer());
            asTurn(played).forEach(payload -> raw.pipeInput(RUN, Json.toBytes(
                    StreamEvent.of(UUID.randomUUID().toString(), System.currentTimeMillis(), RUN, payload))));

            assertThat(driver.createOutputTopic(config.topics().deadLetters(), new StringDeserializer(),
                    new ByteArrayDeserializer()).readValuesToList()).isEmpty();
            List<UpsertEnvelope> upserts = driver.createOutputTopic(config.topics().upserts(), new StringDeserializer(),
                    new ByteArrayDeserializer()).readValuesToList().stream()
                    .map(v -> Json.fromString(new String(v, StandardCharsets.UTF_8), UpsertEnvelope.class)).toList();
            UITurnEvent end = (UITurnEvent) upserts.get(upserts.size() - 1).payload();
            assertThat(end.type()).isEqualTo(played.outcome().status() == StepOutcome.Status.COMPLETE
                    ? UITurnEvent.TURN_COMPLETED : UITurnEvent.TURN_ERROR);
            for (StreamPayload payload : played.payloads()) {
                if (payload instanceof StreamPayload.ItemDone done && !ItemTypes.FUNCTION_CALL.equals(done.finalItem().type())) {
                    assertThat(lastUpsertOf(upserts, done.itemId()).content()).isEqualTo(done.finalItem().content());
                }
            }
        }
    }

    /** The step as the agent loop frames it: response_start first, the terminal event last. */
    private static List<StreamPayload> asTurn(RecordedStreams.Played played) {
        List<StreamPayload> turn = new ArrayList<>();
        turn.add(new StreamPayload.ResponseStart(RUN, "turn-1", "thread-1", null, "model", "provider", 1L));
        turn.addAll(played.payloads());
        StepOutcome outcome = played.outcome();
        turn.add(outcome.status() == StepOutcome.Status.COMPLETE
                ? new StreamPayload.ResponseDone(RUN, "complete", outcome.usage(), outcome.finishReason())
                : new StreamPayload.ResponseError(RUN, outcome.error()));
        return turn;
    }

    private static UIUpsert lastUpsertOf(List<UpsertEnvelope> upserts, String itemId) {
        UIUpsert last = null;
        for (UpsertEnvelope envelope : upserts) {
            if (envelope.payload() instanceof UIUpsert upsert && upsert.itemId().equals(itemId)) {
                last = upsert;
            }
        }
        assertThat(last).as("an upsert of %s", itemId).isNotNull();
        return last;
    }

    private static Properties properties(TopologyConfig config) throws IOException {
        Properties props = config.streamsProperties();
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "gateway-contract");
        props.put(StreamsConfig.STATE_DIR_CONFIG, Files.createTempDirectory("turnstream-ttd").toString());
        return props;
    }
}
