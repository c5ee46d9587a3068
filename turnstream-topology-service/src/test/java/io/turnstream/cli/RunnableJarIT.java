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

/** target/turnstream-topology.jar alone, as a deployment runs it: {@code java -jar} against a real broker. */
class RunnableJarIT {

    @Test
    void theTopologysOwnJarRunsAgainstABrokerWithNothingOfTheDist(@TempDir Path dir) throws Exception {
        Path jar = RunnableJar.built("turnstream-topology");
        RunnableJar.assertShipsNothingOfTheDist(jar);
        RunnableJar.assertPrintsItsHelp(jar, "turnstream-topology");

        Path config = Files.writeString(dir.resolve("topology.properties"),
                "turnstream.application.id=runnable-jar-it\nturnstream.state.dir=" + dir.resolve("state") + "\n");
        int healthPort = TurnstreamProcess.freePort();
        try (TestCluster cluster = TestCluster.start(dir.resolve("kafka"), 1, Map.of());
             TurnstreamProcess topology = TurnstreamProcess.startJar("topology", jar, Map.of(),
                     "--bootstrap-servers", cluster.bootstrapServers(), "--config", config.toString(),
                     "--health-port", String.valueOf(healthPort))) {
            topology.awaitHealthy(healthPort);

            topology.terminate();
            assertThat(topology.stderr()).as("logged by the jar's own log4j2.xml").contains("topology stopped");
        }
    }
}
