package io.turnstream.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.ToolResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Every way out of the workspace a model might try is refused with an error result, and nothing outside
 * is read or written: a secret file sits next to the workspace, reachable by '..', by absolute path, by a
 * symlinked file, through a symlinked directory and through a dangling link.
 */
class WorkspaceConfinementTest {

    private static final String SECRET = "TOP SECRET";

    private final SchedulerHarness harness = new SchedulerHarness(ToolRegistry.installed());
    private Path outside;
    private Map<String, String> outsideBefore;

    @BeforeEach
    void placeASecretNextToTheWorkspaceAndLinksToIt() throws IOException {
        outside = Files.createTempDirectory("turnstream-outside");
        Files.writeString(outside.resolve("secret.txt"), SECRET + "\n");
        Path ws = harness.workspace;
        Files.writeString(ws.resolve("inside.txt"), "fine\n");
        Files.createSymbolicLink(ws.resolve("secret-link.txt"), outside.resolve("secret.txt"));
        Files.createSymbolicLink(ws.resolve("outdir"), outside);
        Files.createSymbolicLink(ws.resolve("dangling.txt"), outside.resolve("created-through-dangling-link.txt"));
        Files.createDirectories(ws.resolve("sub"));
        outsideBefore = snapshot(outside);
    }

    @AfterEach
    void nothingOutsideChanged() throws IOException {
        harness.close();
        assertThat(snapshot(outside)).isEqualTo(outsideBefore);
    }

    private String denied(String tool, String arguments) {
        ToolResult result = harness.awaitResult(harness.call("turn-" + tool, tool, arguments));
        assertThat(result.success()).as("%s %s must be refused, got %s", tool, arguments, result.output()).isFalse();
        assertThat(result.error().code()).isEqualTo(ToolErrors.ACCESS_DENIED);
        assertThat(result.error().message()).startsWith("Access denied: ").doesNotContain(SECRET);
        return result.error().message();
    }

    private String ok(String tool, String arguments) {
        ToolResult result = harness.awaitResult(harness.call("turn-" + tool, tool, arguments));
        assertThat(result.success()).as("%s %s: %s", tool, arguments, result.output()).isTrue();
        return SchedulerHarness.text(result.output());
    }

    @Test
    void dotDotPathsAreRefused() {
        assertThat(denied("read_file", "{\"path\": \"../" + outside.getFileName() + "/secret.txt\"}")).contains("outside the workspace");
        denied("read_file", "{\"path\": \"sub/../../" + outside.getFileName() + "/secret.txt\"}");
        denied("list_files", "{\"path\": \"..\"}");
        denied("write_file", "{\"path\": \"../" + outside.getFileName() + "/new.txt\", \"content\": \"x\"}");
        denied("write_file", "{\"path\": \"not-yet/../../" + outside.getFileName() + "/new.txt\", \"content\": \"x\"}");
    }

    @Test
    void absolutePathsOutsideAreRefusedAndInsideAllowed() {
        denied("read_file", "{\"path\": \"" + outside.resolve("secret.txt") + "\"}");
        denied("grep", "{\"pattern\": \"SECRET\", \"path\": \"" + outside + "\"}");
        denied("write_file", "{\"path\": \"" + outside.resolve("new.txt") + "\", \"content\": \"x\"}");
        denied("read_file", "{\"path\": \"/etc/passwd\"}");

        assertThat(ok("read_file", "{\"path\": \"" + harness.workspace.resolve("inside.txt") + "\"}")).isEqualTo("fine\n");
    }

    @Test
    void aSymlinkToAFileOutsideIsNeitherReadNorWritten() {
        denied("read_file", "{\"path\": \"secret-link.txt\"}");
        denied("grep", "{\"pattern\": \"SECRET\", \"path\": \"secret-link.txt\"}");
        denied("write_file", "{\"path\": \"secret-link.txt\", \"content\": \"overwritten\"}");
        denied("edit_file", "{\"path\": \"secret-link.txt\", \"old_string\": \"TOP\", \"new_string\": \"NO\"}");
    }

    @Test
    void aSymlinkedParentDirectoryLeadsNowhere() {
        denied("read_file", "{\"path\": \"outdir/secret.txt\"}");
        denied("list_files", "{\"path\": \"outdir\"}");
        denied("glob", "{\"pattern\": \"*\", \"path\": \"outdir\"}");
        denied("edit_file", "{\"path\": \"outdir/secret.txt\", \"old_string\": \"TOP\", \"new_string\": \"NO\"}");
    }

    @Test
    void noFileIsCreatedThroughASymlinkedDirectoryOrADanglingLink() {
        denied("write_file", "{\"path\": \"outdir/created.txt\", \"content\": \"x\"}");
        denied("write_file", "{\"path\": \"outdir/deeper/created.txt\", \"content\": \"x\"}");
        denied("write_file", "{\"path\": \"dangling.txt\", \"content\": \"x\"}");
    }

    @Test
    void searchesOfTheWholeWorkspaceDoNotFollowLinksOut() {
        assertThat(ok("grep", "{\"pattern\": \"SECRET\"}")).isEqualTo("No matches for 'SECRET'");
        assertThat(ok("glob", "{\"pattern\": \"**/secret*\"}")).isEqualTo("No files match '**/secret*'");
        assertThat(ok("list_files", "{\"recursive\": true}")).doesNotContain("outdir/secret.txt");
    }

    private static Map<String, String> snapshot(Path dir) throws IOException {
        Map<String, String> files = new TreeMap<>();
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path path : walk.toList()) {
                files.put(dir.relativize(path).toString(), Files.isRegularFile(path) ? Files.readString(path) : "<dir>");
            }
        }
        return files;
    }
}
