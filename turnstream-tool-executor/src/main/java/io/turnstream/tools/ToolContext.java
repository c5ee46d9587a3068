package io.turnstream.tools;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.CancellationException;
import java.util.function.BooleanSupplier;

/**
 * What a tool gets besides its arguments: the call's identity, the workspace, the output limits, the
 * write quota and cancellation.
 */
public final class ToolContext {

    private final String callId;
    private final String turnId;
    private final Workspace workspace;
    private final OutputLimits limits;
    private final WriteQuota quota;
    private final BooleanSupplier cancelled;
    private long written;

    /**
     * @param cancelled true once the call was cancelled, timed out or aborted; the executor also interrupts
     *                  the tool's thread then
     */
    public ToolContext(String callId, String turnId, Workspace workspace, OutputLimits limits, WriteQuota quota,
                       BooleanSupplier cancelled) {
        this.callId = callId;
        this.turnId = turnId;
        this.workspace = workspace;
        this.limits = limits;
        this.quota = quota;
        this.cancelled = cancelled;
    }

    public String callId() {
        return callId;
    }

    public String turnId() {
        return turnId;
    }

    /** The only directory tree tools may read or write; resolve every path through it. */
    public Workspace workspace() {
        return workspace;
    }

    /** How much output the executor passes on; tools that produce listings can stop collecting past it. */
    public OutputLimits limits() {
        return limits;
    }

    /**
     * Writes the whole file (a path of {@link #workspace()}), within the {@link WriteQuota}; never through a
     * symbolic link in its last segment. The quota check and the write of one workspace are serialised, so
     * two calls of a tenant cannot both take the same free space.
     *
     * @throws ToolException {@link ToolErrors#QUOTA_EXCEEDED}, and nothing is written
     */
    public void write(Path file, byte[] content) throws IOException, ToolException {
        synchronized (workspace) {
            quota.check(workspace, file, content.length, written);
            Files.write(file, content, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                    StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
            written += content.length;
        }
    }

    public boolean isCancelled() {
        return cancelled.getAsBoolean() || Thread.currentThread().isInterrupted();
    }

    /** Throws {@link CancellationException} once the call was cancelled; call it between steps of long work. */
    public void checkCancelled() {
        if (isCancelled()) {
            throw new CancellationException("tool call " + callId + " was cancelled");
        }
    }
}
