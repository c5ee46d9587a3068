package io.turnstream.tools;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.stream.Stream;

/**
 * How much a tool may write, so that one call, or one tenant, cannot fill the executor's disk: the
 * bytes one call writes in all, the size of any file after a write or an edit, and the bytes all the
 * files of one workspace (a tenant's directory) hold. Exceeding any is {@link ToolErrors#QUOTA_EXCEEDED}.
 *
 * @param maxCallBytes      the most bytes one call writes, over all its writes
 * @param maxFileBytes      the largest a file may be after a write or an edit
 * @param maxWorkspaceBytes the most the files of one workspace hold together
 */
public record WriteQuota(long maxCallBytes, long maxFileBytes, long maxWorkspaceBytes) {

    public WriteQuota {
        if (maxCallBytes < 1 || maxFileBytes < 1 || maxWorkspaceBytes < 1) {
            throw new IllegalArgumentException("write quotas must be positive, got " + maxCallBytes + ", " + maxFileBytes
                    + " and " + maxWorkspaceBytes + " bytes");
        }
    }

    /**
     * Checks that writing {@code newSize} bytes to {@code file} (replacing what it holds) stays within the
     * quotas, given what the call wrote before.
     *
     * @param writtenBefore the bytes the call wrote before this write
     * @throws ToolException {@link ToolErrors#QUOTA_EXCEEDED}, naming the quota
     */
    void check(Workspace workspace, Path file, long newSize, long writtenBefore) throws ToolException {
        if (newSize > maxFileBytes) {
            throw exceeded("the file would be " + newSize + " bytes; a file may be at most " + maxFileBytes + " bytes");
        }
        if (writtenBefore + newSize > maxCallBytes) {
            throw exceeded("the call would write " + (writtenBefore + newSize) + " bytes; one call may write at most "
                    + maxCallBytes + " bytes");
        }
        long used = usedBytes(workspace.root(), file);
        if (used + newSize > maxWorkspaceBytes) {
            throw exceeded("the workspace would hold " + (used + newSize) + " bytes; its quota is " + maxWorkspaceBytes
                    + " bytes (delete files to make room)");
        }
    }

    /** The bytes of every regular file below {@code root} but {@code replaced}, which the write replaces. */
    private static long usedBytes(Path root, Path replaced) {
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(f -> !f.equals(replaced)).mapToLong(WriteQuota::sizeOfRegularFile).sum();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot measure the workspace " + root, e);
        }
    }

    private static long sizeOfRegularFile(Path file) {
        try {
            BasicFileAttributes attributes = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            return attributes.isRegularFile() ? attributes.size() : 0;
        } catch (IOException gone) {
            // deleted while walking: it holds nothing any more
            return 0;
        }
    }

    private static ToolException exceeded(String message) {
        return new ToolException(ToolErrors.QUOTA_EXCEEDED, "Quota exceeded: " + message);
    }
}
