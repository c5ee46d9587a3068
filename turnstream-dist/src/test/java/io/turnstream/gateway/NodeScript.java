package io.turnstream.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.turnstream.model.Json;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs a Node client script of {@code clients/} that prints one JSON object, and reads it. */
public final class NodeScript {

    private static final long TIMEOUT_SECONDS = 180;

    private NodeScript() {
    }

    /** Runs {@code node script args...} in {@code directory}; fails the test unless it exits 0 in time. */
    public static JsonNode run(Path directory, String script, List<String> args) throws Exception {
        List<String> command = new ArrayList<>(List.of("node", script));
        command.addAll(args);
        Path stderr = Files.createTempFile("node-client", ".err");
        Process process = new ProcessBuilder(command).directory(directory.toFile()).redirectError(stderr.toFile()).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        boolean exited = process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        if (!exited) {
            process.destroyForcibly();
        }
        String err = Files.readString(stderr);
        Files.delete(stderr);
        assertThat(exited && process.exitValue() == 0).as("%s: stdout %s, stderr %s", command, out, err).isTrue();
        return Json.MAPPER.readTree(out);
    }
}
