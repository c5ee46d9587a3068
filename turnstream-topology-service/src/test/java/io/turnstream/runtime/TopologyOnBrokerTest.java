package io.turnstream.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.model.ChangeType;
import io.turnstream.model.DeadLetterHeaders;
import io.turnstream.model.Json;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.ToolCall;
import io.turnstream.model.Topics;
import io.turnstream.model.UIUpsert;
import io.turnstream.model.UiItemType;
import io.turnstream.model.UiPayloadType;
import io.turnstream.model.UpsertEnvelope;
import io.turnstream.testsupport.Requires;
import io.turnstream.testsupport.SystemTool;
import io.turnstream.testsupport.UsesBroker;
import io.turnstream.topology.UpsertTopology;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The topology on a real broker, as clients see it: plain producers in, read_committed consumers (Java and kcat) out. */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
@UsesBroker
class TopologyOnBrokerTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final String APPLICATION_ID = "topology-on-broker";

    @TempDir
    static Path dir;

    private static TestCluster cluster;
    private static StreamsService topology;
    private static RawEventProducer gateway;
    private static UpsertLog upserts;

    @BeforeAll
    static void startBrokerAndTopology() throws Exception {
        cluster = TestCluster.start(dir.resolve("broker"), 3, Map.of());
        gateway = cluster.gateway();
        upserts = cluster.upserts();
        topology = TopologyInstance.start(TopologyInstance.settings(cluster.bootstrapServers(), APPLICATION_ID,
                dir.resolve("state"), Map.of()));
    }

    @AfterAll
    static void stopAll() {
        topology.close();
        cluster.close();
    }

    @Test
    void rawEventsFromAPlainProducerReachUpsertsItemStateAndToolCalls() {
        TurnScript script = TurnScript.builder("turn-e2e")
                .reasoning("rs-1", 5)
                .message("msg-1", 30)
                .functionCall("fc-1", "get_weather", "{\"city\":\"Paris\"}", "call-1")
                .build();

        gateway.send(script.events());

        List<UpsertEnvelope> turn = upserts.awaitEnd(script.turnId(), TIMEOUT);
        UpsertLog.assertExactlyOnceAndComplete(turn, script, "rs-1", "msg-1");
        UIUpsert toolCall = itemUpserts(turn, "fc-1").get(0);
        assertThat(toolCall.itemType()).isEqualTo(UiItemType.TOOL_CALL);
        assertThat(toolCall.toolArguments().get("city").asText()).isEqualTo("Paris");

        Map<String, UpsertEnvelope> itemState = latestByKey(Topics.DEFAULTS.itemState(),
                Set.of("turn-e2e/msg-1", "turn-e2e/rs-1", "turn-e2e/fc-1", "turn-e2e/turn"));
        UIUpsert message = (UIUpsert) itemState.get("turn-e2e/msg-1").payload();
        assertThat(message.changeType()).isEqualTo(ChangeType.COMPLETED);
        assertThat(message.content()).isEqualTo(script.expectedContent("msg-1"));
        assertThat(itemState.get("turn-e2e/turn").payload().type()).isEqualTo(UiPayloadType.TURN_COMPLETED);

        try (CommittedReader toolCalls = new CommittedReader(cluster.bootstrapServers(), Topics.DEFAULTS.toolCalls())) {
            ConsumerRecord<String, String> record = toolCalls.awaitUntil(TIMEOUT, records -> !records.isEmpty()).get(0);
            ToolCall call = Json.fromString(record.value(), ToolCall.class);
            assertThat(record.key()).isEqualTo("turn-e2e");
            assertThat(call.callId()).isEqualTo("call-1");
            assertThat(call.toolName()).isEqualTo("get_weather");
            assertThat(call.runId()).isEqualTo(script.runId());
            assertThat(call.arguments().get("city").asText()).isEqualTo("Paris");
        }
    }

    @Test
    void theStoresChangelogsAreCreatedWithSegmentsOf64MbAndIndexesOf256Kb() throws Exception {
        List<ConfigResource> changelogs = List.of(UpsertTopology.TURNS_STORE, UpsertTopology.ITEMS_STORE,
                        UpsertTopology.CHUNKS_STORE, UpsertTopology.DEADLINES_STORE).stream()
                .map(store -> APPLICATION_ID + "-" + store + "-changelog")
                .map(topic -> new ConfigResource(ConfigResource.Type.TOPIC, topic))
                .toList();

        try (Admin admin = Admin.create(cluster.broker().adminProperties())) {
            Map<ConfigResource, Config> configs = admin.describeConfigs(changelogs).all().get(30, TimeUnit.SECONDS);

            assertThat(configs).hasSize(4).allSatisfy((topic, config) -> {
                assertThat(config.get(TopicConfig.SEGMENT_BYTES_CONFIG).value()).as(topic.name())
                        .isEqualTo("67108864");
                assertThat(config.get(TopicConfig.SEGMENT_INDEX_BYTES_CONFIG).value()).as(topic.name())
                        .isEqualTo("262144");
            });
        }
    }

    @Test
    void poisonInputIsDeadLetteredWithItsReasonAndGoodTurnsCarryOn() throws Exception {
        TurnScript script = TurnScript.longMessage("turn-after-poison", 12);
        StreamEvent orphan = StreamEvent.of("orphan-1", System.currentTimeMillis(), "run-never-started",
                new StreamPayload.ItemDelta("msg-x", "hello"));

        gateway.send(script.slice(0, 4));
        gateway.sendRaw(script.runId(), "{not json".getBytes(StandardCharsets.UTF_8));
        gateway.sendRaw(orphan.runId(), Json.toBytes(orphan));
        gateway.send(script.slice(4, script.size()));

        UpsertLog.assertExactlyOnceAndComplete(upserts.awaitEnd(script.turnId(), TIMEOUT), script,
                TurnScript.messageId(script.turnId()));
        try (CommittedReader deadLetters = new CommittedReader(cluster.bootstrapServers(), Topics.DEFAULTS.deadLetters())) {
            List<ConsumerRecord<String, String>> records = deadLetters.awaitUntil(TIMEOUT, r -> r.size() >= 2);
            assertThat(records).extracting(ConsumerRecord::value).containsExactlyInAnyOrder("{not json", Json.toString(orphan));
            assertThat(records).allSatisfy(r -> assertThat(header(r, DeadLetterHeaders.REASON)).isNotBlank());
            assertThat(records).anySatisfy(r -> assertThat(header(r, DeadLetterHeaders.REASON)).startsWith("unparseable StreamEvent"));
        }
        assertThat(jmxSum("kafka.streams:type=stream-turnstream-metrics,*", "dead-letter-total")).isGreaterThanOrEqualTo(2);
    }

    @Test
    void healthSaysRunningAndStreamsMetricsAreOnJmx() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        HttpResponse<String> health = http.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + topology.healthPort() + "/health")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(health.statusCode()).isEqualTo(200);
        JsonNode body = Json.MAPPER.readTree(health.body());
        assertThat(body.get("status").asText()).isEqualTo("UP");
        assertThat(body.get("state").asText()).isEqualTo("RUNNING");
        assertThat(body.get("applicationId").asText()).isEqualTo(APPLICATION_ID);

        MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
        assertThat(jmx.queryNames(new ObjectName("kafka.streams:type=stream-thread-metrics,*"), null)).isNotEmpty();
        assertThat(jmx.queryNames(new ObjectName("kafka.streams:type=stream-metrics,*"), null)).isNotEmpty();
        assertThat(jmx.queryNames(new ObjectName("kafka.producer:type=producer-metrics,*"), null)).isNotEmpty();
    }

    @Test
    @Requires(SystemTool.KCAT)
    void kcatReadsTheUpsertTopicAsJson() throws Exception {
        TurnScript script = TurnScript.longMessage("turn-for-kcat", 8);
        gateway.send(script.events());
        int expected = upserts.awaitEnd(script.turnId(), TIMEOUT).size();

        List<JsonNode> fromKcat = new ArrayList<>();
        for (String line : kcat("-b", cluster.bootstrapServers(), "-C", "-t", Topics.DEFAULTS.upserts(),
                "-X", "isolation.level=read_committed", "-o", "beginning", "-e", "-q", "-f", "%k\\t%s\\n")) {
            String[] keyAndValue = line.split("\t", 2);
            if (keyAndValue[0].equals(script.turnId())) {
                fromKcat.add(Json.MAPPER.readTree(keyAndValue[1]));
            }
        }

        assertThat(fromKcat).hasSize(expected);
        for (int i = 0; i < fromKcat.size(); i++) {
            JsonNode envelope = fromKcat.get(i);
            assertThat(envelope.get("turnId").asText()).isEqualTo(script.turnId());
            assertThat(envelope.get("seq").asLong()).isEqualTo(i + 1);
            assertThat(envelope.get("eventId").asText()).isNotBlank();
            assertThat(envelope.get("payloadType").asText()).isIn("item_upsert", "turn_event");
            assertThat(envelope.get("payload").get("turnId").asText()).isEqualTo(script.turnId());
        }
        JsonNode completed = fromKcat.get(fromKcat.size() - 2).get("payload");
        assertThat(completed.get("changeType").asText()).isEqualTo("completed");
        assertThat(completed.get("content").asText()).isEqualTo(script.expectedContent(TurnScript.messageId(script.turnId())));
    }

    private static List<UIUpsert> itemUpserts(List<UpsertEnvelope> turn, String itemId) {
        return turn.stream().map(UpsertEnvelope::payload)
                .filter(p -> p instanceof UIUpsert u && u.itemId().equals(itemId))
                .map(UIUpsert.class::cast).toList();
    }

    private static Map<String, UpsertEnvelope> latestByKey(String topic, Set<String> keys) {
        try (CommittedReader reader = new CommittedReader(cluster.bootstrapServers(), topic)) {
            Map<String, UpsertEnvelope> latest = new LinkedHashMap<>();
            reader.awaitUntil(TIMEOUT, records -> {
                records.forEach(r -> latest.put(r.key(), Json.fromString(r.value(), UpsertEnvelope.class)));
                return latest.keySet().containsAll(keys) && latest.get("turn-e2e/turn").payload().type() == UiPayloadType.TURN_COMPLETED;
            });
            return latest;
        }
    }

    private static String header(ConsumerRecord<String, String> record, String name) {
        var header = record.headers().lastHeader(name);
        return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }

    private static double jmxSum(String pattern, String attribute) throws Exception {
        MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
        double sum = 0;
        for (ObjectName name : jmx.queryNames(new ObjectName(pattern), null)) {
            sum += ((Number) jmx.getAttribute(name, attribute)).doubleValue();
        }
        return sum;
    }

    /** Runs kcat, a librdkafka client: the topic is readable without Java. CI installs it (.ci/run). */
    private static List<String> kcat(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("kcat"));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("kcat finished").isTrue();
        assertThat(process.exitValue()).as("kcat exit code").isZero();
        return out.lines().toList();
    }
}
