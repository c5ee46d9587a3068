package io.turnstream.tools.builtin;

import io.turnstream.tools.ToolException;
import io.turnstream.tools.Workspace;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.util.function.Predicate;

/** Reading text files and matching glob patterns, the way every built-in tool does it. */
final class TextFiles {

    private static final int SNIFF_BYTES = 8192;

    private TextFiles() {
    }

    /** A file that holds a NUL byte in its first 8 KiB is treated as binary, as git and grep do. */
    static boolean isBinary(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS)) {
            byte[] head = in.readNBytes(SNIFF_BYTES);
            for (byte b : head) {
                if (b == 0) {
                    return true;
                }
            }
            return false;
        }
    }

    /** UTF-8, with malformed bytes shown as U+FFFD rather than failing the whole read. */
    static Reader reader(Path file) throws IOException {
        return new InputStreamReader(Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS), StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPLACE)
                .onUnmappableCharacter(CodingErrorAction.REPLACE));
    }

    /** The existing regular file a path names, or a clear error. */
    static Path existingFile(Workspace workspace, String path) throws ToolException {
        Path file = workspace.resolve(path);
        if (Files.isDirectory(file)) {
            throw new ToolException("'" + path + "' is a directory, not a file");
        }
        if (!Files.isRegularFile(file)) {
            throw new ToolException("File not found: " + path);
        }
        return file;
    }

    /** The existing directory a path names, or a clear error. */
    static Path existingDirectoryOrFile(Workspace workspace, String path) throws ToolException {
        Path resolved = workspace.resolve(path);
        if (!Files.exists(resolved)) {
            throw new ToolException("No such file or directory: " + path);
        }
        return resolved;
    }

    /**
     * A glob over workspace-relative paths with {@code /} separators. A leading {@code **}{@code /} also
     * matches at the top level ({@code **}{@code /*.java} matches {@code A.java}), as in shells with globstar.
     */
    static Predicate<String> glob(String pattern) throws ToolException {
        try {
            PathMatcher matcher = FileSystems.getDefault().getPathMatcher("glob:" + pattern);
            PathMatcher topLevel = pattern.startsWith("**/")
                    ? FileSystems.getDefault().getPathMatcher("glob:" + pattern.substring(3)) : null;
            return relative -> {
                Path path = Path.of(relative);
                return matcher.matches(path) || (topLevel != null && topLevel.matches(path));
            };
        } catch (IllegalArgumentException e) { // PatternSyntaxException among them
            throw new ToolException("Invalid glob pattern '" + pattern + "': " + e.getMessage());
        }
    }
}
