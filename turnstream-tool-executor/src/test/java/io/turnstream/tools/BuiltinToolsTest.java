package io.turnstream.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.turnstream.model.ToolResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The built-in tools as the model uses them: through the executor, with its schemas and output limits. */
class BuiltinToolsTest {

    private SchedulerHarness harness = new SchedulerHarness(ToolRegistry.installed());

    @AfterEach
    void close() {
        harness.close();
    }

    private void limits(String maxBytes, String maxLines) {
        harness.close();
        harness = new SchedulerHarness(ToolRegistry.installed(), "max-output-bytes", maxBytes, "max-output-lines", maxLines);
    }

    private Path file(String path, String content) throws IOException {
        Path file = harness.workspace.resolve(path);
        Files.createDirectories(file.getParent());
        return Files.writeString(file, content);
    }

    private String ok(String tool, String arguments) {
        ToolResult result = harness.awaitResult(harness.call("turn-" + tool, tool, arguments));
        assertThat(result.success()).as("%s %s: %s", tool, arguments, result.output()).isTrue();
        return SchedulerHarness.text(result.output());
    }

    private ToolResult failed(String tool, String arguments) {
        ToolResult result = harness.awaitResult(harness.call("turn-" + tool, tool, arguments));
        assertThat(result.success()).as("%s %s", tool, arguments).isFalse();
        return result;
    }

    private static String lines(int from, int to) {
        return IntStream.rangeClosed(from, to).mapToObj(i -> "line " + i + "\n").collect(Collectors.joining());
    }

    @Test
    void readFileReadsTextAndPagesThroughLongFiles() throws IOException {
        limits("100000", "4");
        file("long.txt", lines(1, 10));

        assertThat(ok("read_file", "{\"path\": \"long.txt\", \"offset\": 4, \"limit\": 2}")).isEqualTo(lines(4, 5)
                + "[file continues: call read_file with offset=6 to read on]");
        assertThat(ok("read_file", "{\"path\": \"long.txt\"}")).isEqualTo(lines(1, 3)
                + "[file continues: call read_file with offset=4 to read on]");
        assertThat(ok("read_file", "{\"path\": \"long.txt\", \"offset\": 9}")).isEqualTo(lines(9, 10));
        assertThat(failed("read_file", "{\"path\": \"long.txt\", \"offset\": 11}").error().message())
                .isEqualTo("offset 11 is past the end of 'long.txt'");
    }

    @Test
    void readFileExplainsWhatItCannotRead() throws IOException {
        Files.write(harness.workspace.resolve("image.png"), new byte[] {(byte) 0x89, 'P', 'N', 'G', 0, 0, 1});
        Files.createDirectories(harness.workspace.resolve("dir"));

        assertThat(failed("read_file", "{\"path\": \"missing.txt\"}").error().message()).isEqualTo("File not found: missing.txt");
        assertThat(failed("read_file", "{\"path\": \"dir\"}").error().message()).isEqualTo("'dir' is a directory, not a file");
        assertThat(failed("read_file", "{\"path\": \"image.png\"}").error().message())
                .isEqualTo("'image.png' is a binary file (7 bytes); read_file reads text only");
    }

    @Test
    void listFilesShowsDirectoriesAndLinksAndCanRecurse() throws IOException {
        file("src/Main.java", "class Main {}");
        file("README.md", "# hi");
        Files.createSymbolicLink(harness.workspace.resolve("docs"), harness.workspace.resolve("src"));

        assertThat(ok("list_files", "{}")).isEqualTo("README.md\ndocs@\nsrc/");
        assertThat(ok("list_files", "{\"path\": \"src\"}")).isEqualTo("src/Main.java");
        assertThat(ok("list_files", "{\"recursive\": true}")).isEqualTo("README.md\ndocs@\nsrc/\nsrc/Main.java");
        assertThat(failed("list_files", "{\"path\": \"README.md\"}").error().message()).isEqualTo("'README.md' is a file, not a directory");
    }

    @Test
    void globMatchesPathsIncludingTheTopLevel() throws IOException {
        file("A.java", "");
        file("src/main/B.java", "");
        file("src/main/c.txt", "");

        assertThat(ok("glob", "{\"pattern\": \"**/*.java\"}")).isEqualTo("A.java\nsrc/main/B.java");
        assertThat(ok("glob", "{\"pattern\": \"*.txt\", \"path\": \"src/main\"}")).isEqualTo("src/main/c.txt");
        assertThat(ok("glob", "{\"pattern\": \"*.rs\"}")).isEqualTo("No files match '*.rs'");
        assertThat(failed("glob", "{\"pattern\": \"[a-\"}").error().message()).startsWith("Invalid glob pattern '[a-'");
    }

    @Test
    void grepPrintsMatchingLinesWithTheirLocation() throws IOException {
        file("src/A.java", "class A {\n  // TODO fix\n}\n");
        file("src/b.txt", "todo later\n");
        Files.write(harness.workspace.resolve("blob.bin"), new byte[] {'T', 'O', 'D', 'O', 0});

        assertThat(ok("grep", "{\"pattern\": \"TODO\"}")).isEqualTo("src/A.java:2:   // TODO fix");
        assertThat(ok("grep", "{\"pattern\": \"todo\", \"case_insensitive\": true}"))
                .isEqualTo("src/A.java:2:   // TODO fix\nsrc/b.txt:1: todo later");
        assertThat(ok("grep", "{\"pattern\": \"todo\", \"case_insensitive\": true, \"glob\": \"*.txt\"}"))
                .isEqualTo("src/b.txt:1: todo later");
        assertThat(ok("grep", "{\"pattern\": \"class\", \"path\": \"src/A.java\"}")).isEqualTo("src/A.java:1: class A {");
        assertThat(ok("grep", "{\"pattern\": \"nothing\"}")).isEqualTo("No matches for 'nothing'");
        assertThat(failed("grep", "{\"pattern\": \"(\"}").error().message()).startsWith("Invalid regular expression");
    }

    @Test
    void writeFileCreatesParentsAndReplacesContent() throws IOException {
        assertThat(ok("write_file", "{\"path\": \"new/dir/f.txt\", \"content\": \"one\"}")).isEqualTo("Created new/dir/f.txt (3 bytes)");
        assertThat(ok("write_file", "{\"path\": \"new/dir/f.txt\", \"content\": \"two\"}")).isEqualTo("Overwrote new/dir/f.txt (3 bytes)");
        assertThat(harness.workspace.resolve("new/dir/f.txt")).hasContent("two");
        assertThat(failed("write_file", "{\"path\": \"new\", \"content\": \"x\"}").error().message()).isEqualTo("'new' is a directory");
    }

    @Test
    void editFileReplacesExactlyTheTextAsked() throws IOException {
        Path file = file("f.txt", "a = 1\nb = 1\n");

        assertThat(failed("edit_file", "{\"path\": \"f.txt\", \"old_string\": \"= 1\", \"new_string\": \"= 2\"}").error().message())
                .isEqualTo("old_string occurs 2 times in 'f.txt'; add surrounding text to make it unique, or set replace_all");
        assertThat(ok("edit_file", "{\"path\": \"f.txt\", \"old_string\": \"a = 1\", \"new_string\": \"a = 2\"}"))
                .isEqualTo("Replaced 1 occurrence in f.txt");
        assertThat(file).hasContent("a = 2\nb = 1\n");
        assertThat(ok("edit_file", "{\"path\": \"f.txt\", \"old_string\": \" = \", \"new_string\": \": \", \"replace_all\": true}"))
                .isEqualTo("Replaced 2 occurrences in f.txt");
        assertThat(file).hasContent("a: 2\nb: 1\n");
        assertThat(failed("edit_file", "{\"path\": \"f.txt\", \"old_string\": \"zzz\", \"new_string\": \"y\"}").error().message())
                .isEqualTo("old_string was not found in 'f.txt'");
    }

    @Test
    void writesPastAQuotaFailWithQuotaExceededAndChangeNothing() throws IOException {
        harness.close();
        harness = new SchedulerHarness(ToolRegistry.installed(), "max-write-bytes", "40", "max-file-bytes", "60",
                "tenant-quota-bytes", "150");
        ToolResult tooBigAFile = failed("write_file", "{\"path\": \"big.txt\", \"content\": \"" + "x".repeat(61) + "\"}");
        assertThat(tooBigAFile.error().code()).isEqualTo(ToolErrors.QUOTA_EXCEEDED);
        assertThat(tooBigAFile.error().message()).contains("a file may be at most 60 bytes");
        ToolResult tooMuchForACall = failed("write_file", "{\"path\": \"big.txt\", \"content\": \"" + "x".repeat(50) + "\"}");
        assertThat(tooMuchForACall.error().message()).contains("one call may write at most 40 bytes");
        assertThat(harness.workspace.resolve("big.txt")).doesNotExist();

        // replace_all cannot multiply a file past the limit
        Path grow = file("grow.txt", "ab ab ab ab ab ab ab ab");
        ToolResult multiplied = failed("edit_file", "{\"path\": \"grow.txt\", \"old_string\": \"ab\", "
                + "\"new_string\": \"abababab\", \"replace_all\": true}");
        assertThat(multiplied.error().code()).isEqualTo(ToolErrors.QUOTA_EXCEEDED);
        assertThat(Files.readString(grow)).isEqualTo("ab ab ab ab ab ab ab ab");

        // the workspace's quota counts every file, and a replaced file only by its new size
        file("other.txt", "y".repeat(100));
        ToolResult full = failed("write_file", "{\"path\": \"new.txt\", \"content\": \"" + "z".repeat(30) + "\"}");
        assertThat(full.error().code()).isEqualTo(ToolErrors.QUOTA_EXCEEDED);
        assertThat(full.error().message()).contains("the workspace would hold 153 bytes; its quota is 150 bytes");
        assertThat(ok("write_file", "{\"path\": \"other.txt\", \"content\": \"" + "z".repeat(30) + "\"}"))
                .isEqualTo("Overwrote other.txt (30 bytes)");
    }

    @Test
    void longOutputIsCutWithANoticeThatSaysSo() throws IOException {
        limits("40", "3");
        for (int i = 1; i <= 5; i++) {
            file("f" + i + ".txt", "");
        }
        file("wide.txt", "x".repeat(100) + "\n");

        assertThat(ok("list_files", "{}")).isEqualTo("f1.txt\nf2.txt\nf3.txt\n[output truncated: the limit is 3 lines and 40 "
                + "bytes; narrow the request (a smaller path, a stricter pattern, an offset) to see the rest]");
        assertThat(ok("grep", "{\"pattern\": \"x+\"}")).startsWith("wide.txt:1: " + "x".repeat(28) + "\n[output truncated");
    }
}
