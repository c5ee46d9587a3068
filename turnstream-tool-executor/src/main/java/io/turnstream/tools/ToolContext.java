package io.turnstream.tools;

import java.util.concurrent.CancellationException;
import java.util.function.BooleanSupplier;

/** What a tool gets besides its arguments: the call's identity, the workspace, the output limits and cancellation. */
public final class ToolContext {

    private final String callId;
    private final String turnId;
    private final Workspace workspace;
    private final OutputLimits limits;
    private final BooleanSupplier cancelled;

    /**
     * @param cancelled true once the call was cancelled, timed out or aborted; the executor also interrupts
     *                  the tool's thread then
     */
    public ToolContext(String callId, String turnId, Workspace workspace, OutputLimits limits, BooleanSupplier cancelled) {
        this.callId = callId;
        this.turnId = turnId;
        this.workspace = workspace;
        this.limits = limits;
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
