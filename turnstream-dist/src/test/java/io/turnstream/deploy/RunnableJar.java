package io.turnstream.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.runtime.TurnstreamProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.jar.JarFile;
import java.util.zip.ZipEntry;

/**
 * A service's runnable jar as its module's {@code package} builds it ({@code ../<module>/target/<name>.jar};
 * the reactor packages the service modules before the dist's integration tests run).
 */
record RunnableJar(String name, Path path) {

    /**
     * Paths only the dev distribution ships: the broker (its Scala classes are in {@code kafka/}, where the
     * clients keep only version files, and its Java modules), Scala, Connect, Debezium, JDBC, demo, bench.
     */
    private static final List<String> DIST_ONLY = List.of("scala/", "org/apache/kafka/connect/",
            "org/apache/kafka/raft/", "org/apache/kafka/controller/", "org/apache/kafka/metadata/",
            "org/apache/kafka/storage/", "org/apache/kafka/network/", "io/debezium/", "org/hibernate/", "org/postgresql/",
            "org/knowm/xchart/", "io/turnstream/runtime/EmbeddedKafkaBroker", "io/turnstream/cli/Main",
            "io/turnstream/demo/", "io/turnstream/bench/", "io/turnstream/connect/");

    /** Paths of Kafka Streams and RocksDB (its classes and native libraries), which only the topology service runs. */
    private static final List<String> STREAMS = List.of("org/apache/kafka/streams/", "org/rocksdb/", "librocksdbjni");

    static RunnableJar of(String module, String name) {
        Path jar = Path.of("..", module, "target", name + ".jar");
        assertThat(jar).as("%s, built by the package phase of %s", jar, module).isRegularFile();
        return new RunnableJar(name, jar);
    }

    /** Holds none of the dev distribution's pieces: no broker, Scala, Connect, Debezium, JDBC, demo or bench. */
    void assertShipsNothingOfTheDist() {
        List<String> entries = entries();
        assertThat(entries).as("entries of %s", path).isNotEmpty();
        assertThat(entries.stream().filter(RunnableJar::distOnly).toList()).as("dist-only entries of %s", path).isEmpty();
    }

    /** Holds Kafka Streams and RocksDB, as the topology service's jar must. */
    void assertShipsKafkaStreams() {
        assertThat(entriesStartingWith(STREAMS)).as("Kafka Streams and RocksDB entries of %s", path)
                .anyMatch(entry -> entry.startsWith("org/apache/kafka/streams/KafkaStreams"))
                .anyMatch(entry -> entry.startsWith("org/rocksdb/"))
                .anyMatch(entry -> entry.startsWith("librocksdbjni"));
    }

    /** Holds neither Kafka Streams nor RocksDB: the services that run no Streams app ship without them. */
    void assertShipsNoKafkaStreams() {
        assertThat(entriesStartingWith(STREAMS)).as("Kafka Streams and RocksDB entries of %s", path).isEmpty();
    }

    /** {@code java -jar <jar> --help} prints the usage under the jar's name and exits 0. */
    void assertPrintsItsHelp() {
        try (TurnstreamProcess help = start(Map.of(), "--help")) {
            assertThat(help.awaitExit(Duration.ofSeconds(60))).as(help.stderr()).isZero();
            assertThat(help.stdout()).startsWith("Usage: " + name + " ").contains("--bootstrap-servers", "--config");
        }
    }

    /** {@code java -jar <jar> <args>} with {@code env}. */
    TurnstreamProcess start(Map<String, String> env, String... args) {
        return TurnstreamProcess.startJar(name, path, env, args);
    }

    private static boolean distOnly(String entry) {
        return entry.startsWith("kafka/") && entry.endsWith(".class") || DIST_ONLY.stream().anyMatch(entry::startsWith);
    }

    private List<String> entriesStartingWith(List<String> prefixes) {
        return entries().stream().filter(entry -> prefixes.stream().anyMatch(entry::startsWith)).toList();
    }

    private List<String> entries() {
        try (JarFile file = new JarFile(path.toFile())) {
            return Collections.list(file.entries()).stream().map(ZipEntry::getName).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
