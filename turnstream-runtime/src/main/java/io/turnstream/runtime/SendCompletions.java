package io.turnstream.runtime;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Completes the futures of a producer's sends on threads of its own, so that what callers chain on them never runs
 * on Kafka's producer I/O thread: a send made from there of a topic the producer has not written yet waits for
 * metadata that only that thread fetches, until {@code max.block.ms}, and fails (the gateway's approval route saw
 * it, its stored allowance chained on the decision's send).
 */
public final class SendCompletions implements AutoCloseable {

    private final AtomicInteger threads = new AtomicInteger();
    private final ExecutorService completions;

    /** @param name the threads' name, numbered */
    public SendCompletions(String name) {
        this.completions = Executors.newCachedThreadPool(r -> {
            Thread thread = new Thread(r, name + "-" + threads.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * Completes {@code sent} as a send's callback was told ({@code error} null for sent), on one of these threads;
     * once closed, at once on the caller's, so that a send chained then fails at once instead of waiting there.
     */
    public void complete(CompletableFuture<Void> sent, Exception error) {
        Runnable complete = () -> {
            if (error != null) {
                sent.completeExceptionally(error);
            } else {
                sent.complete(null);
            }
        };
        try {
            completions.execute(complete);
        } catch (RejectedExecutionException closed) {
            complete.run();
        }
    }

    /** Completes later sends on the caller's thread; call once the producer is closed. */
    @Override
    public void close() {
        completions.shutdown();
    }
}
