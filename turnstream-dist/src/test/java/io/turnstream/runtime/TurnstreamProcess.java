package io.turnstream.runtime;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;

/**
 * A Turnstream command in its own JVM: a {@code turnstream} subcommand with the test run's classpath,
 * or a service's runnable jar. A real process that can be killed with SIGKILL or stopped with SIGTERM.
 * Its stdout and stderr are kept in {@code target/it-logs/} for a failed test's post-mortem.
 */
public final class TurnstreamProcess implements AutoCloseable {

    /** The {@code turnstream} CLI of turnstream-dist, on the classpath of the tests that start it. */
    private static final String CLI_MAIN = "io.turnstream.cli.Main";
    private static final AtomicInteger COUNTER = new AtomicInteger();
    private static final Path LOG_DIR = Path.of("target", "it-logs");

    private final Process process;
    private final Path stdout;
    private final Path stderr;

    private TurnstreamProcess(Process process, Path stdout, Path stderr) {
        this.process = process;
        this.stdout = stdout;
        this.stderr = stderr;
    }

    /**
     * {@code turnstream <args>} with this test run's classpath.
     *
     * @param name for the log files
     * @param env environment variables to set; TURNSTREAM_BOOTSTRAP_SERVERS is never inherited
     */
    public static TurnstreamProcess start(String name, Map<String, String> env, String... args) {
        return launch(name, env, List.of("-cp", System.getProperty("surefire.test.class.path",
                System.getProperty("java.class.path")), CLI_MAIN), args);
    }

    /** {@code java -jar <jar> <args>}: a runnable jar on its own, nothing of the test's classpath. */
    public static TurnstreamProcess startJar(String name, Path jar, Map<String, String> env, String... args) {
        return launch(name, env, List.of("-jar", jar.toString()), args);
    }

    private static TurnstreamProcess launch(String name, Map<String, String> env, List<String> what, String... args) {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                // a small, quick JVM: the suite shares two cores
                "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                // log as the shipped jars do, not with the tests' log4j2-test.xml
                "-Dlog4j2.configurationFile=log4j2.xml"));
        command.addAll(what);
        command.addAll(List.of(args));
        try {
            Files.createDirectories(LOG_DIR);
            String base = name + "-" + COUNTER.incrementAndGet();
            Path out = LOG_DIR.resolve(base + ".out");
            Path err = LOG_DIR.resolve(base + ".err");
            ProcessBuilder builder = new ProcessBuilder(command)
                    .redirectOutput(out.toFile())
                    .redirectError(err.toFile());
            builder.environment().remove(Settings.BOOTSTRAP_ENV);
            builder.environment().putAll(env);
            return new TurnstreamProcess(builder.start(), out, err);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public String stdout() {
        return read(stdout);
    }

    public String stderr() {
        return read(stderr);
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** Waits until {@code /health} on {@code port} answers 200; fails at once if the process dies first. */
    public void awaitHealthy(int port) {
        awaitHealthy(port, Duration.ofSeconds(90));
    }

    /** As {@link #awaitHealthy(int)}, waiting at most {@code bound}. */
    public void awaitHealthy(int port, Duration bound) {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health"))
                .timeout(Duration.ofSeconds(2)).build();
        Awaitility.await("/health of " + stderr).atMost(bound).pollInterval(Duration.ofMillis(200))
                .ignoreExceptionsInstanceOf(IOException.class)
                .until(() -> {
                    if (!process.isAlive()) {
                        throw new AssertionError("process exited with " + process.exitValue() + "; stderr:\n" + stderr());
                    }
                    return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
                });
    }

    /** SIGKILL: no shutdown hook, no commit, no goodbye to the group. */
    public void kill() {
        process.destroyForcibly();
        awaitExit(Duration.ofSeconds(30));
    }

    /** SIGTERM: the graceful shutdown path. */
    public int terminate() {
        process.destroy();
        return awaitExit(Duration.ofSeconds(60));
    }

    public int awaitExit(Duration timeout) {
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new AssertionError("process did not exit within " + timeout + "; stderr:\n" + stderr());
            }
            return process.exitValue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            kill();
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
