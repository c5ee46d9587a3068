package io.turnstream.gateway.provider;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A turn's cancellation: set once, from any thread. Blocking work registers what to undo (close the
 * provider stream) so that a cancel takes effect at once rather than at the next check.
 */
public final class CancelSignal {

    private final CompletableFuture<String> cancelled = new CompletableFuture<>();
    private final List<Runnable> hooks = new CopyOnWriteArrayList<>();

    /** @return true when this call cancelled, false when it was already cancelled */
    public boolean cancel(String reason) {
        if (!cancelled.complete(reason == null ? "cancelled" : reason)) {
            return false;
        }
        hooks.forEach(Runnable::run);
        return true;
    }

    public boolean isCancelled() {
        return cancelled.isDone();
    }

    public String reason() {
        return cancelled.getNow(null);
    }

    /** Completes with the reason when cancelled. */
    public CompletableFuture<String> future() {
        return cancelled;
    }

    /** A registered cancel hook; closing it unregisters the hook. */
    public interface Registration extends AutoCloseable {
        @Override
        void close();
    }

    /** Runs {@code hook} on cancel (at once if already cancelled) until the returned registration is closed. */
    public Registration onCancel(Runnable hook) {
        hooks.add(hook);
        if (isCancelled()) {
            hook.run();
        }
        return () -> hooks.remove(hook);
    }
}
