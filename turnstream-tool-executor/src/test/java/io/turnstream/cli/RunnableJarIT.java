package io.turnstream.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.runtime.RunnableJar;
import io.turnstream.runtime.TestCluster;
import io.turnstream.runtime.TurnstreamProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** target/turnstream-tool-executor.jar alone, as a deployment runs it: {@code java -jar} against a real broker. */
class RunnableJarIT {

    @Test
    void theExecutorsOwnJarServesAgainstABrokerWithNothingOfTheDist(@TempDir Path dir) throws Exception {
        Path jar = RunnableJar.built("turnstream-tool-executor");
        RunnableJar.assertShipsNothingOfTheDist(jar);
        RunnableJar.assertPrintsItsHelp(jar, "turnstream-tool-executor");

        Path workspace = Files.createDirectory(dir.resolve("workspace"));
        int healthPort = TurnstreamProcess.freePort();
        try (TestCluster cluster = TestCluster.start(dir.resolve("kafka"), 1, Map.of());
             TurnstreamProcess executor = TurnstreamProcess.startJar("tool-executor", jar, Map.of(),
                     "--bootstrap-servers", cluster.bootstrapServers(), "--workspace", workspace.toString(),
                     "--health-port", String.valueOf(healthPort))) {
            executor.awaitHealthy(healthPort);

            executor.terminate();
            assertThat(executor.stderr()).as("logged by the jar's own log4j2.xml").contains("tool-executor stopped");
        }
    }
}
