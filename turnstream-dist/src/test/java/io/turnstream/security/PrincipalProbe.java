package io.turnstream.security;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * What one principal may do on a real broker, asked by doing it with the principal's client file:
 * each method answers true when Kafka allowed it and false when Kafka refused it for authorization;
 * any other failure fails the test.
 */
public final class PrincipalProbe {

    private static final Duration WAIT = Duration.ofSeconds(60);

    private final Properties client;

    private PrincipalProbe(Properties client) {
        this.client = client;
    }

    public static PrincipalProbe using(Path clientFile) {
        return new PrincipalProbe(ClientFile.load(clientFile));
    }

    /** An idempotent (non-transactional) write of one record. */
    public boolean write(String topic) {
        Properties p = props();
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, Long.toString(WAIT.toMillis()));
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            producer.send(new ProducerRecord<>(topic, "probe", "probe")).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (ExecutionException e) {
            return refused(e.getCause());
        } catch (AuthorizationException e) {
            return false;
        } catch (Exception e) {
            throw new AssertionError("writing " + topic + " failed otherwise", e);
        }
    }

    /** Fetches the first record of partition 0, which the test wrote beforehand. */
    public boolean read(String topic) {
        Properties p = consumerProps();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
            TopicPartition partition = new TopicPartition(topic, 0);
            consumer.assign(List.of(partition));
            consumer.seek(partition, 0);
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (System.nanoTime() < deadline) {
                if (!consumer.poll(Duration.ofMillis(500)).isEmpty()) {
                    return true;
                }
            }
            throw new AssertionError("nothing to read on " + partition + " within " + WAIT);
        } catch (AuthorizationException e) {
            return false;
        }
    }

    /** Commits an offset of partition 0 of {@code topic} in {@code group}: what a member of the group does. */
    public boolean commitIn(String group, String topic) {
        Properties p = consumerProps();
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
            consumer.commitSync(Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(0)), WAIT);
            return true;
        } catch (AuthorizationException e) {
            return false;
        }
    }

    /** Starts a transactional producer under {@code transactionalId}. */
    public boolean transact(String transactionalId) {
        Properties p = props();
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, Long.toString(WAIT.toMillis()));
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            producer.initTransactions();
            return true;
        } catch (AuthorizationException e) {
            return false;
        }
    }

    public boolean create(String topic) {
        try (Admin admin = Admin.create(props())) {
            admin.createTopics(List.of(new NewTopic(topic, Optional.of(1), Optional.empty()))).all()
                    .get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (ExecutionException e) {
            return refused(e.getCause());
        } catch (Exception e) {
            throw new AssertionError("creating " + topic + " failed otherwise", e);
        }
    }

    private static boolean refused(Throwable cause) {
        if (cause instanceof AuthorizationException) {
            return false;
        }
        throw new AssertionError("failed otherwise than by authorization", cause);
    }

    private Properties consumerProps() {
        Properties p = props();
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, Long.toString(WAIT.toMillis()));
        return p;
    }

    private Properties props() {
        Properties p = new Properties();
        p.putAll(client);
        return p;
    }
}
