package io.turnstream.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * What one principal may do, asked through kcat (librdkafka) with the principal's
 * {@code <principal>.librdkafka.conf} alone ({@code kcat -F FILE}): true when Kafka allowed it, false when
 * it refused it for authorization; any other failure (no login, no broker) fails the test.
 */
final class KcatProbe {

    private final Path config;

    private KcatProbe(Path config) {
        this.config = config;
    }

    static KcatProbe using(Path librdkafkaFile) {
        return new KcatProbe(librdkafkaFile);
    }

    /** Produces one record. */
    boolean produce(String topic) throws IOException, InterruptedException {
        return allowed("probe-key:probe-value\n", "-P", "-t", topic, "-K", ":", "-X", "message.timeout.ms=30000");
    }

    /** Reads the topic from its beginning to its end (no consumer group). */
    boolean consume(String topic) throws IOException, InterruptedException {
        return allowed("", "-C", "-t", topic, "-o", "beginning", "-e", "-q");
    }

    private boolean allowed(String input, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("kcat", "-F", config.toString()));
        command.addAll(List.of(args));
        Process kcat = new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        try (OutputStream stdin = kcat.getOutputStream()) {
            stdin.write(input.getBytes(StandardCharsets.UTF_8));
        }
        String stderr = new String(kcat.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(kcat.waitFor(120, TimeUnit.SECONDS)).as("kcat %s finished", command).isTrue();
        if (kcat.exitValue() == 0) {
            return true;
        }
        assertThat(stderr.toLowerCase(Locale.ROOT)).as("kcat %s refused for authorization, not anything else", command)
                .contains("authorization failed");
        return false;
    }
}
