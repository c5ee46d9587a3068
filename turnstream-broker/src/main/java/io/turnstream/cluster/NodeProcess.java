package io.turnstream.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One node of a local cluster: {@code turnstream broker --node-id N ...} in a JVM of its own, so it
 * can be stopped, or killed, alone. Its stdout and stderr go to {@code node-N.out} and
 * {@code node-N.log} next to its data directory.
 */
public final class NodeProcess implements AutoCloseable {

    private static final String CLI_MAIN = "io.turnstream.cli.Main";
    private static final String READY = "bootstrap.servers=";

    private final ClusterLayout.Node node;
    private final Process process;
    private final Path stdout;
    private final Path stderr;

    private NodeProcess(ClusterLayout.Node node, Process process, Path stdout, Path stderr) {
        this.node = node;
        this.process = process;
        this.stdout = stdout;
        this.stderr = stderr;
    }

    /**
     * Starts the node; {@link #awaitReady(Duration)} waits until it serves clients.
     *
     * @param classpath the classpath holding the {@code turnstream} CLI
     * @param jvmOptions e.g. {@code -Xmx512m}
     */
    public static NodeProcess start(ClusterLayout layout, ClusterLayout.Node node, Path dataDir, String classpath,
                                    List<String> jvmOptions) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", classpath, CLI_MAIN));
        command.addAll(layout.brokerArguments(node, dataDir));
        Files.createDirectories(dataDir);
        Path out = dataDir.resolve("node-" + node.id() + ".out");
        Path err = dataDir.resolve("node-" + node.id() + ".log");
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectOutput(out.toFile())
                .redirectError(ProcessBuilder.Redirect.appendTo(err.toFile()));
        return new NodeProcess(node, builder.start(), out, err);
    }

    public ClusterLayout.Node node() {
        return node;
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    public CompletableFuture<Process> onExit() {
        return process.onExit();
    }

    /**
     * Waits until the node prints {@code bootstrap.servers=}: it has joined the quorum and serves clients.
     *
     * @throws IllegalStateException when it exits first or does not get there in time, with its log's tail
     */
    public void awaitReady(Duration timeout) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (readyLine().isEmpty()) {
            if (!process.isAlive()) {
                throw new IllegalStateException("node " + node.id() + " exited with " + process.exitValue()
                        + " before it was ready; the end of " + stderr + ":\n" + tail(stderr));
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("node " + node.id() + " was not ready within " + timeout
                        + "; the end of " + stderr + ":\n" + tail(stderr));
            }
            process.waitFor(100, TimeUnit.MILLISECONDS);
        }
    }

    /** SIGKILL: the node stops at once, without a controlled shutdown. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    /** SIGTERM and a controlled shutdown; SIGKILL if it has not exited within a minute. */
    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            kill();
        }
    }

    /** Stops {@code nodes} together: one by one, the last ones would wait for a quorum that is gone. */
    public static void stopAll(List<NodeProcess> nodes) throws InterruptedException {
        List<Thread> stopping = new ArrayList<>();
        for (NodeProcess node : nodes) {
            Thread thread = new Thread(() -> {
                try {
                    node.close();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "stop-node-" + node.node.id());
            thread.start();
            stopping.add(thread);
        }
        for (Thread thread : stopping) {
            thread.join();
        }
    }

    private Optional<String> readyLine() throws IOException {
        return Files.readAllLines(stdout).stream().filter(line -> line.startsWith(READY)).findFirst();
    }

    private static String tail(Path file) throws IOException {
        List<String> lines = Files.exists(file) ? Files.readAllLines(file) : List.of();
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
    }
}
