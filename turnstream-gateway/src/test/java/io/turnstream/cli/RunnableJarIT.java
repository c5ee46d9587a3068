package io.turnstream.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.runtime.RunnableJar;
import io.turnstream.runtime.TestCluster;
import io.turnstream.runtime.TurnstreamProcess;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** target/turnstream-gateway.jar alone, as a deployment runs it: {@code java -jar} against a real broker. */
class RunnableJarIT {

    @Test
    void theGatewaysOwnJarServesAgainstABrokerWithNothingOfTheDist(@TempDir Path dataDir) throws Exception {
        Path jar = RunnableJar.built("turnstream-gateway");
        RunnableJar.assertShipsNothingOfTheDist(jar);
        RunnableJar.assertPrintsItsHelp(jar, "turnstream-gateway");

        int managementPort = TurnstreamProcess.freePort();
        try (TestCluster cluster = TestCluster.start(dataDir, 1, Map.of());
             TurnstreamProcess gateway = TurnstreamProcess.startJar("gateway", jar,
                     Map.of("TURNSTREAM_BOOTSTRAP_SERVERS", cluster.bootstrapServers()),
                     "--port", "0", "--management-port", String.valueOf(managementPort))) {
            gateway.awaitHealthy(managementPort);
            assertThat(gateway.stdout()).startsWith("gateway listening on http://127.0.0.1:");

            gateway.terminate();
            assertThat(gateway.stderr()).as("logged by the jar's own log4j2.xml").contains("gateway stopped");
        }
    }
}
