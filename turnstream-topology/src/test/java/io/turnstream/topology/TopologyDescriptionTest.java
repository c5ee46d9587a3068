package io.turnstream.topology;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.kafka.streams.TopologyDescription;
import org.junit.jupiter.api.Test;

/**
 * The committed description and diagram in {@code topology/} are generated from the code; this
 * test fails when they drift. Regenerate with {@code ./mvnw test -Dtest=TopologyDescriptionTest -Dturnstream.regenerate=true}.
 */
class TopologyDescriptionTest {

    /** The repository's {@code topology/}; tests run in the module's directory. */
    private static final Path DIRECTORY = Path.of("..", "topology");

    @Test
    void committedDescriptionAndDiagramMatchTheCode() throws IOException {
        TopologyDescription description = UpsertTopology.build(TopologyConfig.defaults()).describe();
        String text = description.toString();
        String diagram = "# The upsert topology\n\nGenerated from `UpsertTopology.build` by `TopologyDescriptionTest`; "
                + "do not edit by hand.\n\n```mermaid\n" + TopologyDiagram.mermaid(description) + "```\n";

        if (Boolean.getBoolean("turnstream.regenerate")) {
            Files.writeString(DIRECTORY.resolve("topology-description.txt"), text);
            Files.writeString(DIRECTORY.resolve("README.md"), diagram);
        }
        assertThat(Files.readString(DIRECTORY.resolve("topology-description.txt"))).isEqualTo(text);
        assertThat(Files.readString(DIRECTORY.resolve("README.md"))).isEqualTo(diagram);
    }
}
