package io.turnstream.cli;

import io.turnstream.runtime.Failures;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a long-running subcommand in the foreground until SIGTERM or Ctrl-C, and shuts its service
 * down cleanly (in a shutdown hook, before the JVM exits). If the service fails by itself first, it
 * is closed and the failure becomes the command's error line and exit code.
 */
public final class UntilStopped {

    private static final Logger LOG = LoggerFactory.getLogger(UntilStopped.class);

    private UntilStopped() {
    }

    /**
     * @param name what runs, for the log ("broker", "topology")
     * @param failure completes with the cause if the service stops by itself; never completes otherwise
     */
    public static void run(String name, AutoCloseable service, CompletableFuture<Throwable> failure) {
        Thread hook = new Thread(() -> {
            LOG.info("stopping {}", name);
            closeQuietly(name, service);
            LOG.info("{} stopped", name);
        }, "turnstream-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        Throwable cause;
        try {
            cause = failure.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            cause = e;
        } catch (ExecutionException e) {
            cause = e.getCause();
        }
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            return;
        }
        closeQuietly(name, service);
        throw new CliFailure(ExitCodes.FAILURE, name + " stopped: " + Failures.describe(cause), cause);
    }

    private static void closeQuietly(String name, AutoCloseable service) {
        try {
            service.close();
        } catch (Exception e) {
            LOG.warn("{} did not close cleanly: {}", name, Failures.describe(e));
        }
    }
}
