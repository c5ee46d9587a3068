package io.turnstream.tools;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;

/**
 * Test tools {@code read} (concurrency-safe) and {@code write} (unsafe) that log "start NAME", wait at the
 * gate named by their {@code name} argument until the test opens it, then log "end NAME" (or
 * "interrupted NAME" when stopped): a test controls exactly when each call finishes.
 */
final class GatedTools {

    final List<String> events = Collections.synchronizedList(new ArrayList<>());
    final ScriptedTool read = ScriptedTool.safe("read", this::gated);
    final ScriptedTool write = ScriptedTool.unsafe("write", this::gated);
    private final Map<String, CountDownLatch> gates = new ConcurrentHashMap<>();

    static String named(String name) {
        return "{\"name\": \"" + name + "\"}";
    }

    void open(String... names) {
        for (String name : names) {
            gate(name).countDown();
        }
    }

    private TextNode gated(JsonNode args, ToolContext context) throws InterruptedException {
        String name = args.get("name").asText();
        events.add("start " + name);
        try {
            gate(name).await();
        } catch (InterruptedException e) {
            events.add("interrupted " + name);
            throw e;
        }
        events.add("end " + name);
        return TextNode.valueOf("done " + name);
    }

    private CountDownLatch gate(String name) {
        return gates.computeIfAbsent(name, n -> new CountDownLatch(1));
    }
}
