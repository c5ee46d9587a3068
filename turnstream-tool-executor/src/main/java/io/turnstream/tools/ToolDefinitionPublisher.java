package io.turnstream.tools;

import io.turnstream.model.PublishedTool;
import io.turnstream.model.Topics;
import io.turnstream.model.WireFormat;
import io.turnstream.runtime.TopicReader;
import java.time.Duration;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes the executor's tools to the compacted {@code llm.tool-definitions} (key: tool name) when it
 * starts, so gateways offer the model what the executors run, plugin tools included. A name published
 * before that this executor does not run gets a tombstone: the executors of one group share the
 * tool-call partitions, so any of them may receive any call, and they must all run the same tools.
 */
final class ToolDefinitionPublisher {

    private static final Logger LOG = LoggerFactory.getLogger(ToolDefinitionPublisher.class);
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private ToolDefinitionPublisher() {
    }

    static void publish(Properties kafkaProperties, Topics topics, WireFormat wire, ToolRegistry registry, String instanceId,
                        Clock clock) {
        String topic = topics.toolDefinitions();
        Set<String> withdrawn = new TreeSet<>(publishedNames(kafkaProperties, topic));
        Properties props = new Properties();
        props.putAll(kafkaProperties);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.put(ProducerConfig.CLIENT_ID_CONFIG, "turnstream-tool-executor-" + instanceId + "-definitions");
        long now = clock.millis();
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(props, new StringSerializer(), new ByteArraySerializer())) {
            for (ToolDefinition tool : registry.definitions()) {
                withdrawn.remove(tool.name());
                PublishedTool published = new PublishedTool(tool.name(), tool.description(), tool.inputSchema(),
                        tool.concurrencySafe(), instanceId, now);
                sent.add(producer.send(new ProducerRecord<>(topic, tool.name(), wire.write(topic, published))));
            }
            for (String name : withdrawn) {
                sent.add(producer.send(new ProducerRecord<>(topic, name, null)));
            }
            for (Future<RecordMetadata> each : sent) {
                each.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("cannot publish the tool definitions to " + topic + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while publishing the tool definitions", e);
        }
        if (!withdrawn.isEmpty()) {
            LOG.info("withdrew tools no longer run by this executor: {}", withdrawn);
        }
    }

    /** The tool names on the topic now (tombstoned ones excluded). */
    private static Set<String> publishedNames(Properties kafkaProperties, String topic) {
        Set<String> names = ConcurrentHashMap.newKeySet();
        try (TopicReader reader = new TopicReader("turnstream-tool-definitions-check", kafkaProperties, List.of(topic),
                TopicReader.Start.BEGINNING, record -> {
                    if (record.value() == null) {
                        names.remove(record.key());
                    } else {
                        names.add(record.key());
                    }
                })) {
            reader.caughtUp().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("cannot read the published tool definitions on " + topic + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading the published tool definitions", e);
        }
        return names;
    }
}
