package io.turnstream.gateway.provider;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.ItemType;
import io.turnstream.model.Json;
import io.turnstream.model.ResponseStatus;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.UITurnEvent;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiPayloadType;
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
import org.apache.kafka.streams.TestOutputTopic;
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

    private static final TopologyConfig CONFIG = TopologyConfig.defaults();

    private static RecordedStreams streams;
    private static TopologyTestDriver driver;
    private static TestInputTopic<String, byte[]> rawEvents;
    private static TestOutputTopic<String, byte[]> upserts;
    private static TestOutputTopic<String, byte[]> deadLetters;

    @BeforeAll
    static void start() throws IOException {
        streams = new RecordedStreams();
        driver = new TopologyTestDriver(UpsertTopology.build(CONFIG), properties(), Instant.ofEpochMilli(1_000_000));
        rawEvents = driver.createInputTopic(CONFIG.topics().rawEvents(), new StringSerializer(), new ByteArraySerializer());
        upserts = driver.createOutputTopic(CONFIG.topics().upserts(), new StringDeserializer(), new ByteArrayDeserializer());
        deadLetters = driver.createOutputTopic(CONFIG.topics().deadLetters(), new StringDeserializer(),
                new ByteArrayDeserializer());
    }

    @AfterAll
    static void stop() {
        driver.close();
        streams.close();
    }

    @ParameterizedTest
    @MethodSource("io.turnstream.gateway.provider.RecordedStreams#all")
    void everyNormalisedStreamBecomesUpsertsWithoutDeadLetters(String fixture) {
        RecordedStreams.Played played = streams.play(fixture);
        String runId = "run-" + fixture;

        asTurn(runId, "turn-" + fixture, played).forEach(payload -> rawEvents.pipeInput(runId, Json.toBytes(
                StreamEvent.of(UUID.randomUUID().toString(), System.currentTimeMillis(), runId, payload))));

        assertThat(deadLetters.readValuesToList()).isEmpty();
        List<UpsertEnvelope> turn = upserts.readValuesToList().stream()
                .map(v -> Json.fromString(new String(v, StandardCharsets.UTF_8), UpsertEnvelope.class)).toList();
        UITurnEvent end = (UITurnEvent) turn.get(turn.size() - 1).payload();
        assertThat(end.type()).isEqualTo(played.outcome().status() == ResponseStatus.COMPLETE
                ? UiPayloadType.TURN_COMPLETED : UiPayloadType.TURN_ERROR);
        for (StreamPayload payload : played.payloads()) {
            if (payload instanceof StreamPayload.ItemDone done && done.finalItem().knownType() != ItemType.FUNCTION_CALL) {
                assertThat(lastUpsertOf(turn, done.itemId()).content()).isEqualTo(done.finalItem().content());
            }
        }
    }

    /** The step as the agent loop frames it: response_start first, the terminal event last. */
    private static List<StreamPayload> asTurn(String runId, String turnId, RecordedStreams.Played played) {
        List<StreamPayload> turn = new ArrayList<>();
        turn.add(new StreamPayload.ResponseStart(runId, turnId, "thread-1", null, "model", "provider", 1L));
        turn.addAll(played.payloads());
        StepOutcome outcome = played.outcome();
        turn.add(outcome.status() == ResponseStatus.COMPLETE
                ? new StreamPayload.ResponseDone(runId, ResponseStatus.COMPLETE, outcome.usage(), outcome.finishReason())
                : new StreamPayload.ResponseError(runId, outcome.error()));
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

    private static Properties properties() throws IOException {
        Properties props = CONFIG.streamsProperties();
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "gateway-contract");
        props.put(StreamsConfig.STATE_DIR_CONFIG, Files.createTempDirectory("turnstream-ttd").toString());
        return props;
    }
}
