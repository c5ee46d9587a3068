package io.turnstream.tools;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.turnstream.runtime.Settings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

/**
 * Test tools that talk through files, so they work in an executor in another JVM: each logs
 * "start CALL_ID" to {@code runs.log}, then waits until the file named by {@code wait_for} exists.
 * {@code note} is safe; {@code append} is unsafe and non-idempotent: it appends {@code line} to {@code out.txt}.
 * Run as a program, it is a tool executor with these tools, for a test to kill.
 */
final class ProcessTools {

    static final String RUNS = "runs.log";
    static final String OUT = "out.txt";

    private ProcessTools() {
    }

    static ToolRegistry registry() {
        return ToolRegistry.of(List.of(ScriptedTool.safe("note", ProcessTools::note), ScriptedTool.unsafe("append", ProcessTools::append)));
    }

    private static JsonNode note(JsonNode args, ToolContext context) throws IOException, InterruptedException {
        startAndWait(args, context);
        return TextNode.valueOf("noted");
    }

    private static JsonNode append(JsonNode args, ToolContext context) throws IOException, InterruptedException {
        startAndWait(args, context);
        appendLine(context.workspace().root().resolve(OUT), args.get("line").asText());
        return TextNode.valueOf("appended");
    }

    private static void startAndWait(JsonNode args, ToolContext context) throws IOException, InterruptedException {
        Path root = context.workspace().root();
        appendLine(root.resolve(RUNS), "start " + context.callId());
        if (args.has("wait_for")) {
            Path gate = root.resolve(args.get("wait_for").asText());
            while (!Files.exists(gate)) {
                Thread.sleep(20); // another process opens the gate: there is no latch to share
            }
        }
    }

    private static synchronized void appendLine(Path file, String line) throws IOException {
        Files.writeString(file, line + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    /** {@code ProcessTools SETTINGS_FILE}: runs a tool executor with these tools until the process is killed. */
    public static void main(String[] args) throws Exception {
        new ToolExecutorService(Settings.load(Path.of(args[0]), null), registry()).start().stopped().join();
    }
}
