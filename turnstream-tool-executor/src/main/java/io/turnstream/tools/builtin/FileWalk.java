package io.turnstream.tools.builtin;

import io.turnstream.tools.ToolContext;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Walks a directory tree inside the workspace depth-first, in name order (so output is stable and a cut
 * listing shows the first entries), without following symbolic links: a link is reported as an entry but
 * never entered or read. Unreadable directories are skipped; cancellation stops the walk.
 */
final class FileWalk {

    /** Receives each entry below the start; returns false to end the walk. */
    interface Visitor {
        boolean visit(Path path, BasicFileAttributes attributes) throws IOException;
    }

    private FileWalk() {
    }

    /** @param maxDepth 1 for the start directory's own entries only */
    static void walk(Path start, int maxDepth, ToolContext context, Visitor visitor) throws IOException {
        walk(start, 1, maxDepth, context, visitor);
    }

    private static boolean walk(Path dir, int depth, int maxDepth, ToolContext context, Visitor visitor) throws IOException {
        List<Path> entries = new ArrayList<>();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir)) {
            stream.forEach(entries::add);
        } catch (IOException unreadable) {
            return true;
        }
        entries.sort(Comparator.comparing(path -> path.getFileName().toString()));
        for (Path entry : entries) {
            context.checkCancelled();
            BasicFileAttributes attributes;
            try {
                attributes = Files.readAttributes(entry, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            } catch (IOException vanished) {
                continue;
            }
            if (!visitor.visit(entry, attributes)) {
                return false;
            }
            if (attributes.isDirectory() && depth < maxDepth && !walk(entry, depth + 1, maxDepth, context, visitor)) {
                return false;
            }
        }
        return true;
    }
}
