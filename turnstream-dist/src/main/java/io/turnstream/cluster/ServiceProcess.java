package io.turnstream.cluster;

import io.turnstream.runtime.ServiceMetrics;
import io.turnstream.runtime.Settings;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A Turnstream service ({@code turnstream topology}, {@code tool-executor}, {@code gateway}) in a JVM of
 * its own, so that it can be SIGKILLed alone. Small JVMs: a fault run puts nine on one machine. Its
 * stdout and stderr go to {@code NAME.out} and {@code NAME.log} in the log directory.
 */
public final class ServiceProcess implements AutoCloseable {

    private static final String CLI_MAIN = "io.turnstream.cli.Main";
    /**
     * Log as the shipped jars do, not with a test's log4j2-test.xml, and with the steps of a takeover
     * (log4j2-takeover.xml): the brokers' and the services' lines say where a fault's time went.
     */
    static final String LOG_CONFIG = "-Dlog4j2.configurationFile=log4j2.xml,log4j2-takeover.xml";
    private static final List<String> JVM_OPTIONS = List.of("-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            LOG_CONFIG);

    private final String name;
    private final Process process;
    private final Path stderr;
    private final int healthPort;

    private ServiceProcess(String name, Process process, Path stderr, int healthPort) {
        this.name = name;
        this.process = process;
        this.stderr = stderr;
        this.healthPort = healthPort;
    }

    /**
     * {@code turnstream <args>} on {@code classpath}; TURNSTREAM_BOOTSTRAP_SERVERS is not inherited.
     *
     * @param healthPort where its {@code /health} answers
     */
    public static ServiceProcess start(String name, String classpath, Path logDir, int healthPort, List<String> args)
            throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(JVM_OPTIONS);
        command.addAll(List.of("-cp", classpath, CLI_MAIN));
        command.addAll(args);
        Files.createDirectories(logDir);
        Path err = logDir.resolve(name + ".log");
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectOutput(logDir.resolve(name + ".out").toFile())
                .redirectError(err.toFile());
        builder.environment().remove(Settings.BOOTSTRAP_ENV);
        return new ServiceProcess(name, builder.start(), err, healthPort);
    }

    public String name() {
        return name;
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** Waits until {@code /health} answers 200; fails at once, with its log's tail, if the process exits first. */
    public void awaitHealthy(Duration bound) throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + healthPort + "/health"))
                .timeout(Duration.ofSeconds(2)).build();
        Waits.until("/health of " + name, bound, Duration.ofMillis(200), () -> {
            if (!process.isAlive()) {
                throw new IllegalStateException(name + " exited with " + process.exitValue() + "; the end of " + stderr
                        + ":\n" + tail());
            }
            try {
                return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
            } catch (IOException notYet) {
                return false;
            }
        }, healthy -> healthy);
    }

    /**
     * The value of the Prometheus gauge {@code name} of the Kafka client {@code clientId} on this service's
     * {@code /metrics/prometheus} (its health port); 0 when it has none.
     */
    public double metric(String name, String clientId) throws IOException, InterruptedException {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        URI scrape = URI.create("http://127.0.0.1:" + healthPort + ServiceMetrics.SCRAPE_PATH);
        String text = http.send(HttpRequest.newBuilder(scrape).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        return text.lines().filter(line -> line.startsWith(name + "{") && line.contains("client_id=\"" + clientId + "\""))
                .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1))).sum();
    }

    /** SIGKILL: no shutdown hook, no commit, no goodbye to the group. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            kill();
        }
    }

    private String tail() {
        try {
            List<String> lines = Files.readAllLines(stderr);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
        } catch (IOException e) {
            return "(unreadable: " + e.getMessage() + ")";
        }
    }
}
