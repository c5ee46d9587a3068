package io.turnstream.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.model.ControlMessage;
import io.turnstream.model.ItemType;
import io.turnstream.model.Json;
import io.turnstream.model.StreamEvent;
import io.turnstream.model.StreamPayload;
import io.turnstream.model.ToolResult;
import io.turnstream.model.Topics;
import io.turnstream.runtime.TopicReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Reads {@code llm.raw-events} and {@code llm.control} as a client would, and stands in for the
 * topology and the tool executor: every completed {@code function_call} gets a {@link ToolResult}
 * on {@code llm.tool-results}, keyed by the turn id, answered by the given tool function.
 */
final class RawEventsTap implements AutoCloseable {

    /** A tool call as the stub executor sees it. */
    record Call(String turnId, String callId, String toolName, JsonNode arguments) {
    }

    private final TopicReader reader;
    private final KafkaProducer<String, String> producer;
    private final Topics topics;
    private final Function<Call, ToolResult> tools;
    private final Map<String, List<StreamEvent>> eventsByRun = new ConcurrentHashMap<>();
    private final Map<String, List<JsonNode>> jsonByRun = new ConcurrentHashMap<>();
    private final Map<String, String> keysOfRun = new ConcurrentHashMap<>();
    private final Map<String, String> turnOfRun = new ConcurrentHashMap<>();
    private final Map<String, String> runOfThread = new ConcurrentHashMap<>();
    private final List<ControlMessage> controls = new CopyOnWriteArrayList<>();

    RawEventsTap(String bootstrapServers, Topics topics, Function<Call, ToolResult> tools) {
        this.topics = topics;
        this.tools = tools;
        this.producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class));
        Properties consumer = new Properties();
        consumer.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        this.reader = new TopicReader("raw-events-tap", consumer, List.of(topics.rawEvents(), topics.control()),
                TopicReader.Start.BEGINNING, record -> {
                    String value = new String(record.value(), StandardCharsets.UTF_8);
                    if (record.topic().equals(topics.control())) {
                        controls.add(Json.fromString(value, ControlMessage.class));
                    } else {
                        onRawEvent(record.key(), value);
                    }
                });
    }

    private void onRawEvent(String key, String value) {
        StreamEvent event = Json.fromString(value, StreamEvent.class);
        keysOfRun.put(event.runId(), key);
        jsonByRun.computeIfAbsent(event.runId(), r -> new CopyOnWriteArrayList<>())
                .add(Json.fromString(value, JsonNode.class));
        eventsByRun.computeIfAbsent(event.runId(), r -> new CopyOnWriteArrayList<>()).add(event);
        if (event.payload() instanceof StreamPayload.ResponseStart start) {
            turnOfRun.put(event.runId(), start.turnId());
            runOfThread.put(start.threadId(), event.runId());
        }
        if (event.payload() instanceof StreamPayload.ItemDone done
                && done.finalItem().knownType() == ItemType.FUNCTION_CALL) {
            String turnId = turnOfRun.get(event.runId());
            Call call = new Call(turnId, done.finalItem().callId(), done.finalItem().name(),
                    Json.parseOrText(done.finalItem().arguments()));
            producer.send(new ProducerRecord<>(topics.toolResults(), turnId, Json.toString(tools.apply(call))));
        }
    }

    List<StreamEvent> events(String runId) {
        return List.copyOf(eventsByRun.getOrDefault(runId, List.of()));
    }

    List<StreamPayload> payloads(String runId) {
        return events(runId).stream().map(StreamEvent::payload).toList();
    }

    /** The records exactly as they are on the topic. */
    List<JsonNode> json(String runId) {
        return List.copyOf(jsonByRun.getOrDefault(runId, List.of()));
    }

    /** The run of the thread's latest turn, once its {@code response_start} is published. */
    Optional<String> runOfThread(String threadId) {
        return Optional.ofNullable(runOfThread.get(threadId));
    }

    String keyOf(String runId) {
        return keysOfRun.get(runId);
    }

    /** The run's {@code response_done} or {@code response_error}, once published. */
    Optional<StreamPayload> terminal(String runId) {
        return payloads(runId).stream()
                .filter(p -> p instanceof StreamPayload.ResponseDone || p instanceof StreamPayload.ResponseError)
                .findFirst();
    }

    List<ControlMessage> controls() {
        return List.copyOf(controls);
    }

    @Override
    public void close() {
        reader.close();
        producer.close();
    }
}
