package io.turnstream.connect;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.connect.cli.ConnectStandalone;
import org.apache.kafka.connect.runtime.Connect;
import org.apache.kafka.connect.runtime.Herder;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorInfo;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorStateInfo;
import org.apache.kafka.connect.runtime.standalone.StandaloneHerder;
import org.apache.kafka.connect.util.FutureCallback;

/**
 * A Kafka Connect standalone worker in this JVM (what {@code connect-standalone.sh} runs), with its
 * REST API. Connectors and converters are found on the classpath.
 */
public final class ConnectWorker implements AutoCloseable {

    private static final String RUNNING = "RUNNING";
    private static final String FAILED = "FAILED";

    private final Connect<StandaloneHerder> connect;

    private ConnectWorker(Connect<StandaloneHerder> connect) {
        this.connect = connect;
    }

    /** Starts a worker. Connect's own launcher exits the JVM when the worker cannot start (e.g. its REST port is taken). */
    public static ConnectWorker start(Map<String, String> workerConfig) {
        // Connect swaps in its plugin class loader as this thread's context loader; the caller keeps its own.
        ClassLoader callerLoader = Thread.currentThread().getContextClassLoader();
        try {
            return new ConnectWorker(new ConnectStandalone().startConnect(workerConfig));
        } finally {
            Thread.currentThread().setContextClassLoader(callerLoader);
        }
    }

    /**
     * Creates or replaces a connector and waits until it and its tasks run.
     *
     * @throws IllegalArgumentException when Connect rejects the config, with its validation messages
     * @throws IllegalStateException when the connector or a task fails to start, with its trace
     */
    public void deploy(Map<String, String> connectorConfig, Duration timeout) throws InterruptedException, TimeoutException {
        String name = connectorConfig.get("name");
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("the connector config has no name");
        }
        FutureCallback<Herder.Created<ConnectorInfo>> created = new FutureCallback<>();
        connect.herder().putConnectorConfig(name, connectorConfig, true, created);
        try {
            created.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw new IllegalArgumentException("Connect rejected connector " + name + ": " + e.getCause().getMessage(), e.getCause());
        }
        awaitRunning(name, System.nanoTime() + timeout.toNanos(), timeout);
    }

    /** The connector's and its tasks' states, as {@code GET /connectors/<name>/status} reports them. */
    public ConnectorStateInfo status(String name) {
        return connect.herder().connectorStatus(name);
    }

    public URI restUrl() {
        return connect.rest().advertisedUrl();
    }

    /** Blocks until the worker is stopped (by {@link #close()} from another thread or a shutdown hook). */
    public void awaitStop() {
        connect.awaitStop();
    }

    @Override
    public void close() {
        connect.stop();
    }

    private void awaitRunning(String name, long deadlineNanos, Duration timeout) throws InterruptedException, TimeoutException {
        while (true) {
            ConnectorStateInfo status = status(name);
            if (FAILED.equals(status.connector().state())) {
                throw new IllegalStateException("connector " + name + " failed: " + status.connector().trace());
            }
            for (ConnectorStateInfo.TaskState task : status.tasks()) {
                if (FAILED.equals(task.state())) {
                    throw new IllegalStateException("task " + task.id() + " of connector " + name + " failed: " + task.trace());
                }
            }
            boolean running = RUNNING.equals(status.connector().state()) && !status.tasks().isEmpty()
                    && status.tasks().stream().allMatch(task -> RUNNING.equals(task.state()));
            if (running) {
                return;
            }
            if (System.nanoTime() > deadlineNanos) {
                throw new TimeoutException("connector " + name + " not running after " + timeout + ": " + status);
            }
            TimeUnit.MILLISECONDS.sleep(100);
        }
    }
}
