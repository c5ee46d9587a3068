package io.turnstream.tools;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * The directory tree tools are confined to. Every path a model gives is resolved to a real path
 * (symbolic links followed, as the operating system would) and must lie under the workspace's real
 * root, compared segment by segment. A path that does not exist yet is resolved through its nearest
 * existing ancestor, so a new file cannot be created through a symlinked directory that leads outside.
 */
public final class Workspace {

    private final Path root;

    /** @param root an existing directory; its real path becomes the root */
    public Workspace(Path root) throws IOException {
        Path real = root.toRealPath();
        if (!Files.isDirectory(real)) {
            throw new IOException("workspace " + root + " is not a directory");
        }
        this.root = real;
    }

    public Path root() {
        return root;
    }

    /**
     * Resolves a path given by the model (relative to the root, or absolute) to the real path it names,
     * which may not exist yet.
     *
     * @throws ToolException with code {@link ToolErrors#ACCESS_DENIED} when it names anything outside the root
     */
    public Path resolve(String path) throws ToolException {
        Path requested;
        try {
            requested = root.resolve(path == null || path.isBlank() ? "." : path);
        } catch (InvalidPathException e) {
            throw new ToolException(ToolErrors.ACCESS_DENIED, "Invalid path '" + path + "': " + e.getReason());
        }
        Path existing = requested;
        Deque<String> missing = new ArrayDeque<>();
        while (existing != null && !Files.exists(existing, LinkOption.NOFOLLOW_LINKS)) {
            missing.addFirst(existing.getFileName() == null ? "" : existing.getFileName().toString());
            existing = existing.getParent();
        }
        if (existing == null) {
            throw denied(path);
        }
        Path real;
        try {
            real = existing.toRealPath();
        } catch (IOException danglingLinkOrUnreadable) {
            throw new ToolException(ToolErrors.ACCESS_DENIED,
                    "Access denied: '" + path + "' goes through a symbolic link that cannot be resolved");
        }
        for (String segment : missing) {
            // ".." below a directory that does not exist has no meaning the OS could check: refuse it
            if (segment.equals("..")) {
                throw denied(path);
            }
            if (!segment.isEmpty() && !segment.equals(".")) {
                real = real.resolve(segment);
            }
        }
        if (!real.startsWith(root)) {
            throw denied(path);
        }
        return real;
    }

    /** The workspace-relative form of a resolved path, with {@code /} separators; {@code .} for the root. */
    public String relative(Path resolved) {
        String relative = root.relativize(resolved).toString().replace(resolved.getFileSystem().getSeparator(), "/");
        return relative.isEmpty() ? "." : relative;
    }

    private static ToolException denied(String path) {
        return new ToolException(ToolErrors.ACCESS_DENIED, "Access denied: '" + path + "' is outside the workspace");
    }
}
