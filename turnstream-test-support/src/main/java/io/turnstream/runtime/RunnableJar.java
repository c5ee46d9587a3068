package io.turnstream.runtime;

import static org.assertj.core.api.Assertions.assertThat;

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
 * A service's runnable jar as {@code package} builds it ({@code target/<name>.jar}), checked by the
 * service module's {@code RunnableJarIT} after {@code package}.
 */
public final class RunnableJar {

    /**
     * Paths only the dev distribution ships: the broker (its Scala classes are in {@code kafka/}, where the
     * clients keep only version files, and its Java modules), Scala, Connect, Debezium, JDBC, demo, bench.
     */
    private static final List<String> DIST_ONLY = List.of("scala/", "org/apache/kafka/connect/",
            "org/apache/kafka/raft/", "org/apache/kafka/controller/", "org/apache/kafka/metadata/",
            "org/apache/kafka/storage/", "org/apache/kafka/network/", "io/debezium/", "org/hibernate/", "org/postgresql/",
            "org/knowm/xchart/", "io/turnstream/runtime/EmbeddedKafkaBroker", "io/turnstream/cli/Main",
            "io/turnstream/demo/", "io/turnstream/bench/", "io/turnstream/connect/");

    private RunnableJar() {
    }

    /** {@code target/<name>.jar} of the module under test; fails when {@code package} has not built it. */
    public static Path built(String name) {
        Path jar = Path.of("target", name + ".jar");
        assertThat(jar).as("%s, built by `package` (failsafe runs this test after it)", jar).isRegularFile();
        return jar;
    }

    /** Holds none of the dev distribution's pieces: no broker, Scala, Connect, Debezium, JDBC, demo or bench. */
    public static void assertShipsNothingOfTheDist(Path jar) {
        List<String> entries = entries(jar);
        assertThat(entries).as("entries of %s", jar).isNotEmpty();
        assertThat(entries.stream().filter(RunnableJar::distOnly).toList()).as("dist-only entries of %s", jar).isEmpty();
    }

    /** {@code java -jar <jar> --help} prints the usage of {@code name} and exits 0. */
    public static void assertPrintsItsHelp(Path jar, String name) {
        try (TurnstreamProcess help = TurnstreamProcess.startJar(name + "-help", jar, Map.of(), "--help")) {
            assertThat(help.awaitExit(Duration.ofSeconds(60))).as(help.stderr()).isZero();
            assertThat(help.stdout()).startsWith("Usage: " + name + " ").contains("--bootstrap-servers", "--config");
        }
    }

    private static boolean distOnly(String entry) {
        return entry.startsWith("kafka/") && entry.endsWith(".class") || DIST_ONLY.stream().anyMatch(entry::startsWith);
    }

    private static List<String> entries(Path jar) {
        try (JarFile file = new JarFile(jar.toFile())) {
            return Collections.list(file.entries()).stream().map(ZipEntry::getName).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
