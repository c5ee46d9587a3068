package io.turnstream.tools.builtin;

import io.turnstream.tools.ToolContext;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.FileVisitor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.EnumSet;

/**
 * Walks a directory tree inside the workspace without following symbolic links (a link is reported
 * as an entry but never entered or read), skipping what cannot be read and stopping on cancellation.
 */
final class FileWalk {

    /** Receives each entry below the start; returns false to end the walk. */
    interface Visitor {
        boolean visit(Path path, BasicFileAttributes attributes) throws IOException;
    }

    private FileWalk() {
    }

    static void walk(Path start, int maxDepth, ToolContext context, Visitor visitor) throws IOException {
        Files.walkFileTree(start, EnumSet.noneOf(java.nio.file.FileVisitOption.class), maxDepth, new FileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                context.checkCancelled();
                if (dir.equals(start)) {
                    return FileVisitResult.CONTINUE;
                }
                return visitor.visit(dir, attrs) ? FileVisitResult.CONTINUE : FileVisitResult.TERMINATE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                context.checkCancelled();
                return visitor.visit(file, attrs) ? FileVisitResult.CONTINUE : FileVisitResult.TERMINATE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException unreadable) {
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path dir, IOException unreadable) {
                return FileVisitResult.CONTINUE;
            }
        });
    }
}
