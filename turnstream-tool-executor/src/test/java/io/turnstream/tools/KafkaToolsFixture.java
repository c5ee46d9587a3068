package io.turnstream.tools;

import static org.awaitility.Awaitility.await;

import io.turnstream.model.ControlMessage;
import io.turnstream.model.Json;
import io.turnstream.model.ToolCall;
import io.turnstream.model.ToolResult;
import io.turnstream.model.Topics;
import io.turnstream.runtime.EmbeddedKafkaBroker;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.TopicAdmin;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * One test's own topics (prefixed with its name) on a shared embedded broker, a workspace, and the
 * producing and read_committed reading a test does against a tool executor.
 */
final class KafkaToolsFixture implements AutoCloseable {

    private static final AtomicInteger COUNT = new AtomicInteger();
    /**
     * How long a wait for the executor's work on the broker may take: its first read comes after its consumer group's
     * join and the ledger's read on assignment, seconds on a loaded machine.
     */
    static final Duration PATIENCE = Duration.ofSeconds(60);

    final String name;
    final Topics topics;
    final Path workspace;
    private final EmbeddedKafkaBroker broker;
    private final Properties topicProps = new Properties();
    private final KafkaProducer<String, byte[]> producer;
    private final KafkaConsumer<String, byte[]> results;
    private final List<ConsumerRecord<String, ToolResult>> received = new ArrayList<>();
    private final AtomicInteger calls = new AtomicInteger();

    KafkaToolsFixture(EmbeddedKafkaBroker broker, String testName, int partitions) {
        this.broker = broker;
        this.name = testName + "-" + COUNT.incrementAndGet();
        Topics.DEFAULTS.byRole().forEach((role, topic) -> topicProps.setProperty(Topics.PREFIX + role, name + "." + topic));
        topicProps.setProperty(Topics.PREFIX + "tool-ledger", name + ".llm.tool-ledger");
        topicProps.setProperty(Topics.PREFIX + "tool-calls-dead-letters", name + ".llm.tool-calls.dlq");
        this.topics = Topics.from(topicProps);
        try {
            this.workspace = Files.createTempDirectory("turnstream-ws");
            TopicAdmin.createAll(clientProps(), topics, partitions, (short) 1);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        this.producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()),
                new StringSerializer(), new ByteArraySerializer());
        this.results = readCommitted();
        results.subscribe(List.of(topics.toolResults()));
    }

    /** Settings of an executor on these topics: {@code turnstream.tool-executor.*} keys without the prefix, in pairs. */
    Settings settings(String... executorSettings) {
        Properties props = clientProps();
        props.putAll(topicProps);
        props.setProperty(ToolExecutorConfig.WORKSPACE, workspace.toString());
        props.setProperty(ToolExecutorConfig.PREFIX + "group-id", name + "-executor");
        props.setProperty(ToolExecutorConfig.PREFIX + "instance-id", name + "-instance");
        props.setProperty(ToolExecutorConfig.PREFIX + "shutdown-grace-ms", "2000");
        for (int i = 0; i < executorSettings.length; i += 2) {
            props.setProperty(ToolExecutorConfig.PREFIX + executorSettings[i], executorSettings[i + 1]);
        }
        return Settings.of(props);
    }

    ToolExecutorService start(ToolRegistry registry, String... executorSettings) {
        return start(registry, settings(executorSettings));
    }

    ToolExecutorService start(ToolRegistry registry, Settings settings) {
        return new ToolExecutorService(settings, registry).start();
    }

    /** Produces a tool call keyed by its turn id; returns its call id. */
    String call(String turnId, String tool, String arguments) {
        return callWithId(turnId, name + "-call-" + calls.incrementAndGet(), tool, arguments);
    }

    /** As {@link #call}, with the call id given (another turn may use the same one). */
    String callWithId(String turnId, String callId, String tool, String arguments) {
        return callOn(null, turnId, callId, tool, arguments);
    }

    /** As {@link #call}, on the given partition of llm.tool-calls whatever its turn id. */
    String callOnPartition(int partition, String turnId, String tool, String arguments) {
        return callOn(partition, turnId, name + "-call-" + calls.incrementAndGet(), tool, arguments);
    }

    private String callOn(Integer partition, String turnId, String callId, String tool, String arguments) {
        produce(new ProducerRecord<>(topics.toolCalls(), partition, turnId, Json.toBytes(new ToolCall(callId, turnId,
                "thread-1", "run-1", "item-" + callId, tool, Json.parseOrText(arguments), System.currentTimeMillis()))));
        return callId;
    }

    void cancel(String turnId) {
        produce(topics.control(), turnId, Json.toBytes(ControlMessage.cancel(turnId, "user pressed stop")));
    }

    void produce(String topic, String key, byte[] value) {
        produce(topic, key, value, new RecordHeaders());
    }

    void produce(String topic, String key, byte[] value, Headers headers) {
        produce(new ProducerRecord<>(topic, null, key, value, headers));
    }

    private void produce(ProducerRecord<String, byte[]> record) {
        try {
            producer.send(record).get();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Waits until every one of these calls has a result on llm.tool-results; returns all results received so far. */
    List<ConsumerRecord<String, ToolResult>> awaitResults(Collection<String> callIds) {
        await().atMost(PATIENCE).until(() -> {
            poll();
            return callIds.stream().allMatch(id -> received.stream().anyMatch(r -> r.value().callId().equals(id)));
        });
        return List.copyOf(received);
    }

    ToolResult awaitResult(String callId) {
        return awaitResults(List.of(callId)).stream().map(ConsumerRecord::value)
                .filter(result -> result.callId().equals(callId)).findFirst().orElseThrow();
    }

    /** Waits until {@code count} results for this call id (of any turns) are on llm.tool-results; returns them. */
    List<ConsumerRecord<String, ToolResult>> awaitResultsOf(String callId, int count) {
        await().atMost(PATIENCE).until(() -> {
            poll();
            return received.stream().filter(r -> r.value().callId().equals(callId)).count() >= count;
        });
        return received.stream().filter(r -> r.value().callId().equals(callId)).toList();
    }

    /** The keys of the executor's ledger records, once {@code ready} holds for them. */
    List<String> awaitLedgerKeys(Predicate<List<String>> ready) {
        List<String> keys = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer = readCommitted()) {
            consumer.subscribe(List.of(topicProps.getProperty(Topics.PREFIX + "tool-ledger")));
            await().atMost(PATIENCE).until(() -> {
                consumer.poll(Duration.ofMillis(100)).forEach(record -> keys.add(record.key()));
                return ready.test(keys);
            });
        }
        return keys;
    }

    boolean answered(String callId) {
        poll();
        return received.stream().anyMatch(r -> r.value().callId().equals(callId));
    }

    /** The dead-letter records, once {@code ready} holds for them. */
    List<ConsumerRecord<String, byte[]>> awaitDeadLetters(Predicate<List<ConsumerRecord<String, byte[]>>> ready) {
        List<ConsumerRecord<String, byte[]>> letters = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer = readCommitted()) {
            consumer.subscribe(List.of(topicProps.getProperty(Topics.PREFIX + "tool-calls-dead-letters")));
            await().atMost(PATIENCE).until(() -> {
                consumer.poll(Duration.ofMillis(100)).forEach(letters::add);
                return ready.test(letters);
            });
        }
        return letters;
    }

    private void poll() {
        for (ConsumerRecord<String, byte[]> record : results.poll(Duration.ofMillis(100))) {
            received.add(new ConsumerRecord<>(record.topic(), record.partition(), record.offset(), record.key(),
                    Json.fromString(new String(record.value(), java.nio.charset.StandardCharsets.UTF_8), ToolResult.class)));
        }
    }

    private KafkaConsumer<String, byte[]> readCommitted() {
        return new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, name + "-reader-" + COUNT.incrementAndGet(),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"),
                new StringDeserializer(), new ByteArrayDeserializer());
    }

    private Properties clientProps() {
        Properties props = new Properties();
        props.setProperty("bootstrap.servers", broker.bootstrapServers());
        return props;
    }

    @Override
    public void close() {
        producer.close();
        results.close();
    }
}
