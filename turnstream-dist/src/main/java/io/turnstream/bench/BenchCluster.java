package io.turnstream.bench;

import io.turnstream.model.Topics;
import io.turnstream.runtime.EmbeddedKafkaBroker;
import io.turnstream.runtime.Settings;
import io.turnstream.runtime.StreamsService;
import io.turnstream.runtime.TopicAdmin;
import io.turnstream.topology.TopologyConfig;
import io.turnstream.topology.UpsertTopology;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;

/**
 * The embedded broker of one benchmark run and the applications measured on it: the upsert
 * topology and the pass-through baseline, both with the topology's Kafka Streams and producer
 * configuration ({@link TopologyConfig#streamsProperties()}), each phase on its own topics.
 */
final class BenchCluster implements AutoCloseable {

    private static final Duration IN_SYNC_LIMIT = Duration.ofSeconds(120);

    private final Path dir;
    /** The run's own broker; null on a cluster started elsewhere ({@link #on}). */
    private final EmbeddedKafkaBroker broker;
    private final String bootstrapServers;
    private final short replicas;
    private final Properties userKafka;
    private final int partitions;

    BenchCluster(Properties userKafka, int partitions) throws IOException {
        this.dir = Files.createTempDirectory("turnstream-bench");
        this.broker = new EmbeddedKafkaBroker(0, dir.resolve("broker")).start();
        this.bootstrapServers = broker.bootstrapServers();
        this.replicas = 1;
        this.userKafka = userKafka;
        this.partitions = partitions;
    }

    private BenchCluster(String bootstrapServers, short replicas, Properties userKafka, int partitions) throws IOException {
        this.dir = Files.createTempDirectory("turnstream-bench");
        this.broker = null;
        this.bootstrapServers = bootstrapServers;
        this.replicas = replicas;
        this.userKafka = userKafka;
        this.partitions = partitions;
    }

    /** The applications measured on a running cluster, each topic with {@code replicas} replicas. */
    static BenchCluster on(String bootstrapServers, short replicas, Properties userKafka, int partitions)
            throws IOException {
        return new BenchCluster(bootstrapServers, replicas, userKafka, partitions);
    }

    String bootstrapServers() {
        return bootstrapServers;
    }

    Properties clientProperties() {
        Properties props = new Properties();
        props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        return props;
    }

    /** The contract's topics of one phase, under {@code bench.<phase>.}. */
    Topics createTopics(String phase) throws ExecutionException, InterruptedException {
        Topics topics = Topics.prefixed("bench." + phase + ".");
        TopicAdmin.createAll(clientProperties(), topics, partitions, replicas,
                Map.of(TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG, Integer.toString(Math.min(2, replicas))));
        if (replicas > 1) {
            awaitInSync(topics.byRole().values());
        }
        return topics;
    }

    /**
     * Waits until every partition of {@code topics} has a leader and every replica in sync: on a loaded
     * multi-node cluster a producer that starts before would see its first batches expire unsent.
     */
    private void awaitInSync(Collection<String> topics) throws InterruptedException {
        try (Admin admin = Admin.create(clientProperties())) {
            boolean ready = TopicTail.await(() -> {
                try {
                    return admin.describeTopics(topics).allTopicNames().get().values().stream()
                            .flatMap(topic -> topic.partitions().stream())
                            .allMatch(p -> p.leader() != null && p.isr().size() == p.replicas().size());
                } catch (ExecutionException notYet) {
                    return false;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }, IN_SYNC_LIMIT);
            if (!ready) {
                throw new IllegalStateException("the partitions of " + topics + " had no leader or replicas out of sync after "
                        + IN_SYNC_LIMIT.toSeconds() + " s");
            }
        }
    }

    /**
     * Bytes of {@code topic}'s log segment files on the broker, every partition: what the broker stores
     * of it, compressed batches and transaction markers included (index files aside).
     */
    long logBytes(String topic) throws IOException {
        if (broker == null) {
            throw new IllegalStateException("the log of " + topic + " is on brokers of another process");
        }
        Pattern partitionDir = Pattern.compile(Pattern.quote(topic) + "-\\d+");
        long bytes = 0;
        try (Stream<Path> dirs = Files.list(broker.dataDir().resolve("logs"))) {
            for (Path dir : dirs.filter(d -> partitionDir.matcher(d.getFileName().toString()).matches()).toList()) {
                try (Stream<Path> files = Files.list(dir)) {
                    for (Path segment : files.filter(f -> f.getFileName().toString().endsWith(".log")).toList()) {
                        bytes += Files.size(segment);
                    }
                }
            }
        }
        return bytes;
    }

    /** One more topic, for a baseline's output. */
    String createTopic(String name) throws ExecutionException, InterruptedException {
        try (Admin admin = Admin.create(clientProperties())) {
            admin.createTopics(List.of(new NewTopic(name, partitions, replicas))).all().get();
        }
        return name;
    }

    Producer<String, byte[]> producer() {
        return new KafkaProducer<>(clientProperties(), new StringSerializer(), new ByteArraySerializer());
    }

    /**
     * The flood's producer: one request in flight per broker, and a write given up after
     * {@code deliveryTimeout} instead of the default two minutes (the flood then produces again on fresh
     * topics). With several in flight, a first request that reaches a brand-new partition before its
     * leader knows of it is refused while the next one is appended; the first is then refused as out of
     * order until it expires (KAFKA-15591, fixed upstream in apache/kafka#23234, not in Kafka 4.3.1's or 4.4.0's
     * broker). It stalled {@code bench --cluster 3} for 30 s a run and failed it on 2026-11-27.
     */
    Producer<String, byte[]> producer(Duration deliveryTimeout) {
        Properties props = clientProperties();
        props.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1);
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) deliveryTimeout.toMillis());
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) deliveryTimeout.toMillis() / 2);
        return new KafkaProducer<>(props, new StringSerializer(), new ByteArraySerializer());
    }

    /** The upsert topology with the seed gradient ({@code growthFraction} 0) or the growth rule. */
    StreamsService startTopology(String applicationId, Topics topics, double growthFraction) throws InterruptedException {
        return startTopology(applicationId, topics, growthFraction, "state");
    }

    /** One more instance of the topology {@code applicationId}, with its stores in {@code stateDir} of its own. */
    StreamsService startTopology(String applicationId, Topics topics, double growthFraction, String stateDir)
            throws InterruptedException {
        TopologyConfig config = topologyConfig(applicationId, growthFraction, stateDir).withTopics(topics);
        return started(UpsertTopology.build(config), config.streamsProperties());
    }

    /**
     * The baseline: copies every raw record to {@code to}, with the topology's own Kafka Streams and
     * producer configuration (exactly-once, compression, timeouts, anything the user passed): only the
     * topology differs. It has no {@link io.turnstream.topology.TopologyConfig.CommitPacing pacing} of its own, so
     * it commits at the interval the topology's pacing keeps for such input: the fresh one for paced turns
     * (the ladder), the behind one for a backlog ({@code backlog}: the flood).
     */
    StreamsService startPassThrough(String applicationId, String from, String to, boolean backlog)
            throws InterruptedException {
        Topology copy = new Topology();
        copy.addSource("raw", Serdes.String().deserializer(), Serdes.ByteArray().deserializer(), from);
        copy.addSink("copy", to, Serdes.String().serializer(), Serdes.ByteArray().serializer(), "raw");
        TopologyConfig config = topologyConfig(applicationId, 0, "state");
        Properties props = config.streamsProperties();
        TopologyConfig.CommitPacing pacing = config.commitPacing();
        if (pacing.adaptive()) {
            props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG,
                    Long.toString(backlog ? pacing.behindIntervalMs() : pacing.intervalMs()));
        }
        return started(copy, props);
    }

    /** The topology's configuration as {@code turnstream topology} would read it from the user's properties. */
    TopologyConfig topologyConfig(String applicationId, double growthFraction, String stateDir) {
        Properties props = new Properties();
        props.putAll(userKafka);
        props.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        props.put(TopologyConfig.APPLICATION_ID, applicationId);
        props.put(TopologyConfig.STATE_DIR, dir.resolve(stateDir).toString());
        props.put(TopologyConfig.MIN_GROWTH_FRACTION, Double.toString(growthFraction));
        return TopologyConfig.from(Settings.of(props));
    }

    /** The runtime options {@code turnstream topology} reads from the user's properties, without a health endpoint. */
    StreamsService.Options runtimeOptions() {
        return StreamsService.Options.from(Settings.of(userKafka), -1);
    }

    /**
     * Started with the runtime options {@code turnstream topology} reads from the same properties (a stream
     * thread that dies is replaced within the same budget), without a health endpoint.
     */
    private StreamsService started(Topology topology, Properties props) throws InterruptedException {
        StreamsService service = StreamsService.start(topology, props, runtimeOptions());
        if (!TopicTail.await(service::isRunning, Duration.ofSeconds(90))) {
            service.close();
            throw new IllegalStateException(props.getProperty(StreamsConfig.APPLICATION_ID_CONFIG)
                    + " did not reach RUNNING within 90 s (state " + service.state() + ")");
        }
        return service;
    }

    @Override
    public void close() throws IOException {
        if (broker != null) {
            broker.stop();
        }
        Utils.delete(dir.toFile());
    }
}
