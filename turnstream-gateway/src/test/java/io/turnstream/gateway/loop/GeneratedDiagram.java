package io.turnstream.gateway.loop;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A Mermaid diagram generated from the code and committed to docs/gateway.md between two markers: the check
 * fails when the committed copy drifts; {@code -Dturnstream.regenerate=true} rewrites it instead.
 */
final class GeneratedDiagram {

    private static final Path DOC = Path.of("..", "docs", "gateway.md");

    private GeneratedDiagram() {
    }

    /** Checks (or rewrites) the diagram between the lines {@code begin} and {@code end}. */
    static void assertCommitted(String begin, String end, String mermaid) throws IOException {
        String diagram = begin + "```mermaid\n" + mermaid + "```\n" + end;
        String doc = Files.readString(DOC);
        int from = doc.indexOf(begin);
        int to = doc.indexOf(end);
        assertThat(from).as("docs/gateway.md holds the generated diagram").isNotNegative();
        String committed = doc.substring(from, to + end.length());
        if (Boolean.getBoolean("turnstream.regenerate")) {
            Files.writeString(DOC, doc.replace(committed, diagram));
            committed = diagram;
        }
        assertThat(committed).isEqualTo(diagram);
    }
}
